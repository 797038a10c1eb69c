import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { openBoard } from "@bridgeworks/board";
import { RoundTripTap } from "@bridgeworks/board/testing";
import { ProcessTracker } from "@bridgeworks/test-harness";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import {
  bundlePath,
  createSandbox,
  type RunningBridge,
  runBee,
  type Sandbox,
  startBridge,
  textOf,
} from "./helpers.js";
import {
  clusterScript,
  dropSchema,
  freshBoardUrl,
  postgresServerUrl,
  startCluster,
  type TestCluster,
} from "./postgres-cluster.js";

// BEE_BOARD=postgres://… is the only difference from the SQLite tests: the bridges and the CLI are
// the built bundle, each "machine" with its own HOME, XDG dirs and run dir.

let tracker: ProcessTracker;
const cleanups: Array<() => void | Promise<void>> = [];

beforeEach(() => {
  tracker = new ProcessTracker();
});

afterEach(async () => {
  await tracker.endAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Page {
  records: Array<{ id: string; body: string; state: string; from: string; to: string }>;
  cursor: string;
}

/** A fresh board (schema) on `serverUrl`, dropped after the test. */
function freshBoard(serverUrl = postgresServerUrl()): string {
  const { url, schema } = freshBoardUrl(serverUrl);
  cleanups.push(() => dropSchema(serverUrl, schema));
  return url;
}

/** Another machine, as far as bee can tell: its own HOME, XDG dirs and run dir; the board is shared. */
function machine(boardUrl: string): Sandbox {
  const sandbox = createSandbox();
  cleanups.push(() => sandbox.dispose());
  const xdg = {
    XDG_STATE_HOME: join(sandbox.root, "xdg-state"),
    XDG_CONFIG_HOME: join(sandbox.root, "xdg-config"),
    XDG_RUNTIME_DIR: join(sandbox.root, "xdg-runtime"),
  };
  for (const dir of Object.values(xdg)) mkdirSync(dir, { mode: 0o700 });
  Object.assign(sandbox.env, xdg, { BEE_BOARD: boardUrl });
  return sandbox;
}

function passwordOf(url: string): string {
  return decodeURIComponent(new URL(url).password);
}

async function call(running: RunningBridge, name: string, args: Record<string, unknown> = {}) {
  return running.client.callTool({ name, arguments: args });
}

function structured<T>(value: unknown): T {
  const result = value as { structuredContent?: unknown; isError?: unknown };
  expect(result.isError, textOf(result)).toBeFalsy();
  return result.structuredContent as T;
}

function json<T>(stdout: string): T {
  return JSON.parse(stdout) as T;
}

describe("two bridges on different machines sharing one PostgreSQL board", () => {
  test("a bee_post through one wakes the other's waiting bee_wait_action with that record", async () => {
    const board = freshBoard();
    const password = passwordOf(board);
    expect(password).not.toBe("");
    const alphaMachine = machine(board);
    const betaMachine = machine(board);
    const alpha = await startBridge({
      tracker,
      env: { ...alphaMachine.env, BEE_AGENT: "alpha", BEE_LOG_LEVEL: "debug" },
    });
    const beta = await startBridge({
      tracker,
      env: { ...betaMachine.env, BEE_AGENT: "beta", BEE_LOG_LEVEL: "debug" },
    });

    const { cursor } = structured<Page>(await call(beta, "bee_wait_action", { timeoutSeconds: 1 }));
    let settled = false;
    const waiting = beta.client
      .request(
        {
          method: "tools/call",
          params: { name: "bee_wait_action", arguments: { timeoutSeconds: 30, cursor } },
        },
        CallToolResultSchema,
      )
      .finally(() => {
        settled = true;
      });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(settled).toBe(false);

    const postedAt = Date.now();
    const posted = structured<Page["records"][number]>(
      await call(alpha, "bee_post", { to: "beta", kind: "task", body: "from the other machine" }),
    );
    expect(posted.from).toMatch(/^agent:alpha#[0-9a-f]{8}$/);
    const page = structured<Page>(await waiting);
    // Woken by the server's NOTIFY, not found by the 5 s safety re-check.
    expect(Date.now() - postedAt).toBeLessThan(2500);
    expect(page.records).toEqual([posted]);

    // Each bridge shows the board without its password, and never logs it.
    const whoami = structured<{ board: string }>(await call(beta, "bee_whoami"));
    expect(whoami.board).not.toContain(password);
    expect(whoami.board).toContain("schema=");
    for (const running of [alpha, beta]) {
      expect(running.process.stderr()).toContain("bridge started");
      expect(running.process.stderr()).not.toContain(password);
    }
  });
});

describe("the CLI on a PostgreSQL board", () => {
  test("bee board migrate reports 0 -> 3 on a fresh schema, then 3 -> 3", async () => {
    const board = freshBoard();
    const env = machine(board).env;
    const first = await runBee(["board", "migrate", "--json"], env);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(json(first.stdout)).toMatchObject({ store: "postgres", previousVersion: 0, schemaVersion: 3 });
    const second = await runBee(["board", "migrate", "--json"], env);
    expect(second.code).toBe(0);
    expect(json(second.stdout)).toMatchObject({ store: "postgres", previousVersion: 3, schemaVersion: 3 });
    const text = await runBee(["board", "migrate"], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^postgres board postgresql:\/\/postgres:\*\*\*@.*: already at schema version 3\n$/,
    );
    for (const result of [first, second, text]) expect(result.stdout).not.toContain(passwordOf(board));
  });

  test("bee board migrate --board takes the URL; a bad subcommand is a usage error", async () => {
    const board = freshBoard();
    const { BEE_BOARD: _, ...env } = machine(board).env;
    const migrated = await runBee(["board", "migrate", "--json", "--board", board], env);
    expect(migrated.code).toBe(0);
    expect(json(migrated.stdout)).toMatchObject({ previousVersion: 0, schemaVersion: 3 });
    const bad = await runBee(["board", "drop"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(`bee board: "drop": is not a bee board command (see 'bee board --help')\n`);
  });

  test("bee post, list --json, claim and agents --json work against the URL", async () => {
    const board = freshBoard();
    const env = machine(board).env;
    const posted = await runBee(["post", "--to", "*", "--kind", "review", "--json", "look at this"], env);
    expect(posted.stderr).toBe("");
    expect(posted.code).toBe(0);
    const record = json<Page["records"][number]>(posted.stdout);
    expect(record).toMatchObject({ to: "*", from: "human", body: "look at this", state: "open" });

    const listed = await runBee(["list", "--json"], env);
    expect(listed.code).toBe(0);
    expect(json<Page>(listed.stdout).records).toEqual([record]);

    const claimed = await runBee(["claim", record.id, "--as", "carol", "--json"], env);
    expect(claimed.code).toBe(0);
    expect(json(claimed.stdout)).toMatchObject({ outcome: "claimed" });

    // The password may live in PGPASSWORD instead of the URL.
    const withoutPassword = new URL(board);
    withoutPassword.password = "";
    const viaPgPassword = await runBee(["list", "--json"], {
      ...env,
      BEE_BOARD: withoutPassword.toString(),
      PGPASSWORD: passwordOf(board),
    });
    expect(viaPgPassword.stderr).toBe("");
    expect(json<Page>(viaPgPassword.stdout).records.map((entry) => entry.id)).toEqual([record.id]);

    const agents = await runBee(["agents", "--json"], env);
    expect(agents.code).toBe(0);
    const list = json<Array<{ identity: string; status: string }>>(agents.stdout);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ status: "active" });
    expect(list[0]?.identity).toMatch(/^agent:carol#[0-9a-f]{8}$/);
  });
});

describe("bee_claim_next on a PostgreSQL board", () => {
  test("when the answer to a claim is lost, the bridge does not claim again: it says how to find the claim", async () => {
    const board = freshBoard();
    const tap = await RoundTripTap.start(board);
    cleanups.push(() => tap.close());
    const env = machine(tap.url).env;
    const running = await startBridge({ tracker, env: { ...env, BEE_AGENT: "epsilon" } });
    const { identity } = structured<{ identity: string }>(await call(running, "bee_whoami"));
    const inspector = await openBoard(board);
    cleanups.push(() => inspector.close());
    const first = await inspector.post({ kind: "task", to: "*", from: "human", body: "first" });
    const second = await inspector.post({ kind: "task", to: "*", from: "human", body: "second" });

    // The claim commits in the server; its answer never reaches the bridge.
    const cut = tap.cutNextAnswer(1);
    const result = await call(running, "bee_claim_next");
    await cut;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^board unavailable \(busy\): .*may or may not have been made.*; call bee_list/,
    );
    expect(textOf(result)).not.toContain(passwordOf(board));
    // Claimed once, by this bridge; a repeated claim would have taken the second action too.
    expect(await inspector.get(first.id)).toMatchObject({ state: "claimed", claimedBy: identity });
    expect(await inspector.get(second.id)).toMatchObject({ state: "open" });

    // The bridge is fine: the next call claims the next action.
    const next = structured<{ outcome: string; record: { id: string } }>(
      await call(running, "bee_claim_next"),
    );
    expect([next.outcome, next.record.id]).toEqual(["claimed", second.id]);
  });
});

describe("bee claim-next on a PostgreSQL board", () => {
  test("when the answer to its claim is lost, it fails (exit 1) saying how to find the claim, and claims nothing else", async () => {
    const board = freshBoard();
    const tap = await RoundTripTap.start(board);
    cleanups.push(() => tap.close());
    const env = machine(tap.url).env;
    const inspector = await openBoard(board);
    cleanups.push(() => inspector.close());
    const first = await inspector.post({ kind: "task", to: "*", from: "human", body: "first" });
    const second = await inspector.post({ kind: "task", to: "*", from: "human", body: "second" });
    const cut = tap.cutAnswerTo("claim_next", 1);
    const lost = await runBee(["claim-next", "--as", "zeta"], env);
    await cut;
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(
      /may or may not have been made.*run `bee list` and look for an action claimed/,
    );
    expect(lost.stderr).not.toContain(passwordOf(board));
    // Claimed once: a repeated claim would have taken the second action too.
    expect(await inspector.get(first.id)).toMatchObject({
      state: "claimed",
      claimedBy: expect.stringMatching(/^agent:zeta#[0-9a-f]{8}$/),
    });
    expect(await inspector.get(second.id)).toMatchObject({ state: "open" });
  });
});

describe("a PostgreSQL server that is away", () => {
  let cluster: TestCluster;

  beforeAll(() => {
    // This cluster is halted and resumed, so it is this file's own, not the one the other tests share.
    cluster = startCluster();
  }, 120_000);

  afterAll(() => {
    if (cluster !== undefined) clusterScript("stop", cluster.dir);
  }, 120_000);

  test("a wait whose bound passes while the server is halted is a retry-with-the-same-cursor error; the cursor works after resume", async () => {
    const board = freshBoard(cluster.url);
    const env = machine(board).env;
    const running = await startBridge({
      tracker,
      env: { ...env, BEE_AGENT: "gamma", BEE_LOG_LEVEL: "debug" },
    });
    const { cursor } = structured<Page>(await call(running, "bee_wait_action", { timeoutSeconds: 1 }));

    const waiting = running.client.request(
      { method: "tools/call", params: { name: "bee_wait_action", arguments: { timeoutSeconds: 4, cursor } } },
      CallToolResultSchema,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    clusterScript("halt", cluster.dir);
    let resumed = false;
    try {
      const failed = await waiting;
      expect(failed.isError).toBe(true);
      expect(textOf(failed)).toMatch(/^board unavailable \(busy\): .*; retry with the same cursor$/);
      expect(textOf(failed)).not.toContain(passwordOf(board));

      // The bridge is still up and still answers while the server is away.
      const meanwhile = await call(running, "bee_wait_action", { timeoutSeconds: 1, cursor });
      expect(meanwhile.isError).toBe(true);
      expect(textOf(meanwhile)).toMatch(/retry with the same cursor$/);

      clusterScript("resume", cluster.dir);
      resumed = true;
    } finally {
      if (!resumed) clusterScript("resume", cluster.dir);
    }

    const posted = await runBee(["post", "--to", "gamma", "--json", "after the outage"], env);
    expect(posted.stderr).toBe("");
    expect(posted.code).toBe(0);
    const record = json<Page["records"][number]>(posted.stdout);
    const page = structured<Page>(await call(running, "bee_wait_action", { timeoutSeconds: 10, cursor }));
    expect(page.records).toEqual([record]);
    expect(running.process.stderr()).not.toContain(passwordOf(board));
    expect(await Promise.race([running.process.exited, Promise.resolve("running")])).toBe("running");
  });

  test("bee wait rides out the server halted, resumed and restarted, and says done once the action is", async () => {
    const board = freshBoard(cluster.url);
    const env = machine(board).env;
    const id = (await runBee(["post", "--to", "*", "through the outage"], env)).stdout.trim();
    const waiting = tracker.spawn(process.execPath, [bundlePath, "wait", id, "--until", "completed"], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    clusterScript("halt", cluster.dir);
    try {
      await new Promise((resolve) => setTimeout(resolve, 3000));
    } finally {
      clusterScript("resume", cluster.dir);
    }
    clusterScript("restart", cluster.dir);
    expect((await runBee(["claim", id, "--as", "omega"], env)).code).toBe(0);
    expect((await runBee(["complete", id, "--as", "omega", "--result", "shipped"], env)).code).toBe(0);
    expect(await waiting.exited).toMatchObject({ code: 0 });
    expect(waiting.stdout()).toMatch(new RegExp(`^${id} is done by agent:omega#[0-9a-f]{8}: shipped\n$`));
    expect(waiting.stderr()).not.toContain(passwordOf(board));
  });

  test("a bridge whose server refuses connections answers with a retry error and no password", async () => {
    const env = machine("postgres://bee:hunter2secret@127.0.0.1:1/bee?schema=nowhere").env;
    const running = await startBridge({
      tracker,
      env: { ...env, BEE_AGENT: "delta", BEE_LOG_LEVEL: "debug" },
    });
    const result = await call(running, "bee_wait_action", { timeoutSeconds: 1 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^board unavailable \(busy\): .*; retry with the same cursor$/);
    const whoami = await call(running, "bee_whoami");
    expect(whoami.isError).toBe(true);
    const cli = await runBee(["list"], env);
    expect(cli.code).toBe(1);
    for (const text of [textOf(result), textOf(whoami), running.process.stderr(), cli.stdout, cli.stderr]) {
      expect(text).not.toContain("hunter2secret");
    }
    expect(running.process.stderr()).toContain("postgres://bee:***@127.0.0.1:1/bee?schema=nowhere");
  });
});
