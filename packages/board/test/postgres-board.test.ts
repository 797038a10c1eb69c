import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { ActionRecord, AgentIdentity, Cursor } from "@bridgeworks/protocol";
import {
  postgresClusterScript as clusterScript,
  startPostgresCluster as startCluster,
  type TestCluster,
} from "@bridgeworks/test-harness";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { type Board, BoardError, openBoard, openPostgresBoard, resolveBoardLocation } from "../src/index.js";
import { BoardProcess, killByPid, refusal, tickingClock } from "../src/testing/index.js";
import { boardProcessScript, postgresHarness, recheckIntervalMs } from "./postgres-harness.js";

const waiterScript = fileURLToPath(new URL("./fixtures/board-waiter.mjs", import.meta.url));

const boards: Board[] = [];
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  await Promise.all(children.splice(0).map(killByPid));
  await Promise.all(boards.splice(0).map((board) => board.close()));
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function newHarness(serverUrl?: string) {
  const harness = await postgresHarness(serverUrl);
  cleanups.push(() => harness.dispose());
  return harness;
}

async function open(url: string, options: Partial<Parameters<typeof openPostgresBoard>[0]> = {}) {
  const board = await openPostgresBoard({ url, recheckIntervalMs, ...tickingClock(), ...options });
  boards.push(board);
  return board;
}

/** A process with its own environment (its own HOME and BEE_BOARD): another machine, for the board. */
function machineEnv(location: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(tmpdir(), "bee-machine-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const { BEE_TEST_POSTGRES_URL: _, ...inherited } = process.env;
  return {
    ...inherited,
    HOME: home,
    XDG_STATE_HOME: join(home, "state"),
    BEE_BOARD: location,
    BEE_TEST_RECHECK_MS: String(recheckIntervalMs),
    ...extra,
  };
}

interface Waiter {
  identity: AgentIdentity;
  cursor: Cursor;
  wait: () => Promise<{ records?: ActionRecord[]; error?: { code: string }; elapsedMs: number }>;
}

async function startWaiter(env: NodeJS.ProcessEnv): Promise<Waiter> {
  const child = spawn(process.execPath, [waiterScript], { env, stdio: ["pipe", "pipe", "inherit"] });
  children.push(child);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    const line = await lines.next();
    if (line.done === true) throw new Error(`waiter ${child.pid} ended`);
    return JSON.parse(line.value as string);
  };
  const ready = await next();
  return {
    identity: ready.identity,
    cursor: ready.cursor,
    wait: async () => {
      child.stdin!.write("wait\n");
      return next();
    },
  };
}

async function startBoardProcess(env: NodeJS.ProcessEnv): Promise<BoardProcess> {
  const child = spawn(process.execPath, [boardProcessScript], { env, stdio: ["pipe", "pipe", "inherit"] });
  children.push(child);
  return BoardProcess.start(child);
}

describe("locations", () => {
  test("openBoard opens PostgreSQL for a postgres:// URL and SQLite for a path; cursors stay with their board", async () => {
    const { url } = await newHarness();
    const dir = mkdtempSync(join(tmpdir(), "bee-board-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const onPostgres = await openBoard(url, { recheckIntervalMs });
    const onSqlite = await openBoard(join(dir, "board.db"), { recheckIntervalMs });
    boards.push(onPostgres, onSqlite);
    const viaPostgresql = await openBoard(url.replace(/^postgresql:/, "postgres:"), { recheckIntervalMs });
    boards.push(viaPostgresql);

    const posted = await onPostgres.post({ kind: "note", to: "*", from: "human", body: "shared" });
    expect((await viaPostgresql.list()).records).toEqual([posted]);
    await onSqlite.post({ kind: "note", to: "*", from: "human", body: "local" });

    const fromSqlite = (await onSqlite.list()).cursor;
    const fromPostgres = (await onPostgres.list()).cursor;
    for (const [board, cursor] of [
      [onPostgres, fromSqlite],
      [onSqlite, fromPostgres],
    ] as const) {
      const error = await refusal(board.list({ cursor }));
      expect(error.argument).toBe("cursor");
      expect(error.message).toContain("belongs to another board");
    }
    const other = await newHarness();
    const onOther = await open(other.url);
    expect((await refusal(onOther.list({ cursor: fromPostgres }))).argument).toBe("cursor");
  });

  test("a malformed URL or schema is refused by name, without the password", async () => {
    const badUrl = await refusal(openPostgresBoard({ url: "postgres://bee:hunter2@[::1" }));
    expect([badUrl.code, badUrl.argument]).toEqual(["invalid_argument", "url"]);
    expect(badUrl.message).not.toContain("hunter2");
    const badSchema = await refusal(openBoard("postgres://bee:hunter2@localhost/db?schema=Robert';DROP"));
    expect(badSchema.argument).toBe("url");
    expect(badSchema.message).not.toContain("hunter2");
    expect((await refusal(openBoard("relative/board.db"))).argument).toBe("location");
  });

  test("an unreachable server fails the open as a retryable busy", async () => {
    const closedPort = "postgres://bee:secret@127.0.0.1:1/bee";
    const error = await refusal(openPostgresBoard({ url: closedPort, connectTimeoutMs: 2000 }));
    expect([error.code, error.retryable]).toEqual(["busy", true]);
  });
});

describe("two machines on one server", () => {
  test("a post from one machine wakes the wait on the other, through LISTEN/NOTIFY", async () => {
    const { url } = await newHarness();
    expect(resolveBoardLocation({ BEE_BOARD: url }, "/home/ada")).toBe(url);
    const waiter = await startWaiter(machineEnv(url, { BEE_TEST_AGENT: "bob", BEE_TEST_WAIT_MS: "15000" }));
    const poster = await startBoardProcess(machineEnv(url));

    const waiting = waiter.wait();
    // Let the wait reach the server before the post, so only a wake-up can deliver it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const posted = await poster.call("post", { kind: "review", to: "bob", from: "human", body: "PR 7" });
    const page = await waiting;
    expect(page.records).toEqual([posted]);
    // The safety re-check is ten minutes away and the wait's bound 15 s: this came from NOTIFY.
    expect(page.elapsedMs).toBeLessThan(10_000);
  });
});

describe("a server that restarts or goes away", () => {
  let cluster: TestCluster;

  beforeAll(() => {
    // This cluster is restarted and halted, so it is this file's own, not the one every test shares.
    cluster = startCluster();
  }, 120_000);

  afterAll(() => {
    if (cluster !== undefined) clusterScript("stop", cluster.dir);
  }, 120_000);

  /** Retries what a caller retries: a `busy` (here, the restart), with the same arguments. */
  async function untilNotBusy<T>(operation: () => Promise<T>, deadlineMs = 15_000): Promise<T> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      try {
        return await operation();
      } catch (error) {
        if (!(error instanceof BoardError && error.retryable) || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  test("waiters ride out pg_ctl restart -m fast: nothing lost, nothing claimable twice", async () => {
    const { url } = await newHarness(cluster.url);
    const poster = await open(url);
    const claimedBefore = await poster.post({ kind: "job", to: "*", from: "human", body: "before" });
    const openBefore = await poster.post({ kind: "job", to: "*", from: "human", body: "still open" });
    const waiters = await Promise.all(Array.from({ length: 4 }, () => open(url)));
    const agents = await Promise.all(waiters.map((board) => board.register("worker")));
    expect((await waiters[0]!.claim(agents[0]!.identity, claimedBefore.id)).outcome).toBe("claimed");
    const { cursor: start } = await poster.list();

    /** Waits from `cursor` until `id` turns up, retrying a busy wait with the same cursor. */
    const waitFor = async (index: number, cursor: Cursor, id: string) => {
      const seen: ActionRecord[] = [];
      let position = cursor;
      let retries = 0;
      while (!seen.some((record) => record.id === id)) {
        try {
          const page = await waiters[index]!.waitForClaimable(agents[index]!.identity, position, {
            timeoutMs: 15_000,
          });
          if (page.records.length === 0) throw new Error(`waiter ${index} timed out without ${id}`);
          seen.push(...page.records);
          position = page.cursor;
        } catch (error) {
          if (!(error instanceof BoardError && error.retryable) || ++retries > 50) throw error;
        }
      }
      return { seen, cursor: position };
    };

    let posted: ActionRecord | undefined;
    const waits = waiters.map((_, index) =>
      (async () => {
        // The marker is posted after the restart; each waiter must find it without help.
        while (posted === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
        return waitFor(index, start, posted.id);
      })(),
    );
    const earlyWaits = waiters.map((board, index) =>
      board.waitForClaimable(agents[index]!.identity, start, { timeoutMs: 15_000 }).then(
        (page) => ({ page }),
        (error: unknown) => ({ error }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    clusterScript("restart", cluster.dir);
    posted = await untilNotBusy(() => poster.post({ kind: "job", to: "*", from: "human", body: "after" }));

    // Waits in flight during the restart return the new action, or a retryable busy; never crash.
    for (const outcome of await Promise.all(earlyWaits)) {
      if ("error" in outcome) {
        expect(outcome.error).toBeInstanceOf(BoardError);
        expect((outcome.error as BoardError).retryable).toBe(true);
      } else {
        expect(outcome.page.records.map((record) => record.id)).toEqual([posted.id]);
      }
    }
    const found = await Promise.all(waits);
    for (const { seen } of found) {
      expect(seen.map((record) => record.id)).toEqual([posted.id]);
    }

    // Every waiter saw it; exactly one of them gets it, and no one is offered it again.
    const outcomes = await Promise.all(
      waiters.map((board, index) => untilNotBusy(() => board.claim(agents[index]!.identity, posted!.id))),
    );
    expect(outcomes.filter((outcome) => outcome.outcome === "claimed")).toHaveLength(1);
    const fromStart = await untilNotBusy(() =>
      waiters[1]!.waitForClaimable(agents[1]!.identity, undefined, { timeoutMs: 100 }),
    );
    expect(fromStart.records.map((record) => record.id)).toEqual([openBefore.id]);
    for (const [index, { cursor }] of found.entries()) {
      const again = await waiters[index]!.waitForClaimable(agents[index]!.identity, cursor, {
        timeoutMs: 200,
      });
      expect(again.records).toEqual([]);
    }
    expect(await poster.get(claimedBefore.id)).toMatchObject({
      state: "claimed",
      claimedBy: agents[0]!.identity,
    });
  }, 60_000);

  test("a wait whose bound passes while the server is down fails busy; the same cursor works once it is back", async () => {
    const { url } = await newHarness(cluster.url);
    const board = await open(url);
    const bob = await board.register("bob");
    const { cursor } = await board.list();

    const waiting = board.waitForClaimable(bob.identity, cursor, { timeoutMs: 3_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    clusterScript("halt", cluster.dir);
    let resumed = false;
    try {
      const error = await refusal(waiting);
      expect([error.code, error.retryable]).toEqual(["busy", true]);
      expect(error.message).toContain("retry with the same cursor");
      expect((await refusal(board.list())).code).toBe("busy");
      clusterScript("resume", cluster.dir);
      resumed = true;
      const posted = await untilNotBusy(() =>
        board.post({ kind: "job", to: "bob", from: "human", body: "" }),
      );
      const page = await untilNotBusy(() =>
        board.waitForClaimable(bob.identity, cursor, { timeoutMs: 5_000 }),
      );
      expect(page.records).toEqual([posted]);
    } finally {
      if (!resumed) clusterScript("resume", cluster.dir);
    }
  }, 60_000);
});

describe("closing", () => {
  test("close() after a wait settles in a process with nothing else to do (its idle connections are unref'd)", async () => {
    const { url } = await newHarness();
    const script = `
      import { openBoard } from ${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)};
      const board = await openBoard(process.env.BEE_BOARD, { recheckIntervalMs: 600000 });
      const { identity } = await board.register("closer", { lease: false });
      await board.waitForClaimable(identity, undefined, { timeoutMs: 100 });
      await board.close();
      process.stdout.write("closed\\n");
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      env: { ...process.env, BEE_BOARD: url },
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(child);
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
    });
    const code = await new Promise((resolve) => child.once("exit", resolve));
    // Before, node found nothing keeping it alive while the connections ended: exit 13, close() unsettled.
    expect({ code, out }).toEqual({ code: 0, out: "closed\n" });
  });
});
