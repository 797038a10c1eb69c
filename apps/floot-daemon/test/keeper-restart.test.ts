import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { Backend, TurnEventEnvelope } from "@bridgeworks/protocol";
import { isProcessAlive, waitUntil } from "@bridgeworks/test-harness";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { keeperPlaces } from "../src/daemon/keeper-link.js";
import {
  appDir,
  FlootWorld,
  filesContaining,
  filesUnder,
  providedSecret,
  requestSecretStep,
  stageForOtherUsers,
} from "./daemon-harness.js";

// Issue 31: a daemon restart interrupts no running turn. The CLI runs under the keeper, which outlives
// the daemon (SIGTERM as a service manager's restart sends it, or SIGKILL); the next daemon proves the
// state dir's key to it, attaches to the CLI again and journals each of its lines once, in order. Real
// claude and codex through the built bundle.

const backends: Backend[] = ["claude", "codex"];
const restarts = ["SIGTERM", "SIGKILL"] as const;

let world: FlootWorld | undefined;

afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

async function restart(w: FlootWorld, how: (typeof restarts)[number]): Promise<void> {
  if (how === "SIGTERM") await w.stopDaemon();
  else await w.killDaemon();
  await w.startDaemon();
}

function shownText(events: TurnEventEnvelope[]): string {
  // Claude streams deltas and then the whole text; Codex reports the whole message.
  const deltas = events.flatMap(({ event }) => (event.type === "assistant.delta" ? [event.text] : []));
  if (deltas.length > 0) return deltas.join("");
  return events.flatMap(({ event }) => (event.type === "assistant.text" ? [event.text] : [])).join("");
}

/** A Claude turn that wrote `text` and then waits on the model for ever, its text journaled. */
async function stalledTurn(text: string) {
  world = await FlootWorld.create("claude", {
    steps: [
      {
        match: { lastUserTextIncludes: "[long]" },
        response: { events: [{ type: "text", text }, { type: "stall" }] },
      },
    ],
  });
  const w = world;
  await w.startDaemon();
  const session = await w.createSession();
  const turn = await w.send(session.id, "[long] keep going");
  await w.waitForTurn(turn.id, (t) => t.effects.includes("assistant_text"), "text journaled");
  return { w, session, turn, cli: (await w.turn(turn.id)).process! };
}

function contiguous(events: TurnEventEnvelope[]): boolean {
  return events.every((envelope, position) => envelope.index === position);
}

describe.each(backends)("a restart keeps the turn running: %s", (backend) => {
  test.each(restarts)("%s while the answer streams: completed, every word once", async (how) => {
    const words = Array.from({ length: 12 }, (_, index) => `word${index}`).join(" ");
    world = await FlootWorld.create(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[stream]" },
          response: { events: [{ type: "text", text: words, chunks: 12, deltaDelayMs: 400 }] },
        },
      ],
    });
    const w = world;
    await w.startDaemon();
    const session = await w.createSession();
    const turn = await w.send(session.id, "[stream] say the words");
    // Mid-stream: lines journaled before the restart (Claude's first words; Codex's start), so the
    // next daemon reads them again without journaling them twice.
    await w.waitForTurn(
      turn.id,
      (t) => (backend === "claude" ? t.effects.includes("assistant_text") : t.conversationId !== undefined),
      "the stream under way",
      60_000,
    );
    const cli = (await w.turn(turn.id)).process!;
    expect((await w.turn(turn.id)).stdoutThrough).toBeGreaterThan(0);
    await restart(w, how);
    const done = await w.waitForEnd(turn.id, 90_000);
    expect(done.phase, JSON.stringify(done.error)).toBe("completed");
    // The same CLI went on: no second process, no replay.
    expect(done.process).toEqual(cli);
    expect(done.attempt).toBe(1);
    expect(await w.turns(session.id)).toHaveLength(1);
    const events = await w.events(turn.id);
    expect(contiguous(events)).toBe(true);
    expect(shownText(events)).toBe(words);
    expect(w.requestsWith("[stream]")).toBe(1);
  });

  test.each(restarts)("%s during a 4-second Bash tool: completed, the tool ran once", async (how) => {
    const markerName = "keeper-marker.txt";
    const callId = backend === "claude" ? "toolu_kept" : "call_kept";
    world = await FlootWorld.create(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[tool]" },
          response: {
            events: [
              {
                type: "tool_use",
                id: callId,
                nameFrom: { equals: backend === "claude" ? "Bash" : "exec_command" },
                input:
                  backend === "claude"
                    ? { command: `sleep 4; echo ran >> ${markerName}`, description: "run it" }
                    : { cmd: `sleep 4; echo ran >> ${markerName}` },
              },
            ],
          },
        },
        { repeat: true, response: { events: [{ type: "text", text: "after the tool" }] } },
      ],
    });
    const w = world;
    await w.startDaemon();
    const session = await w.createSession();
    const marker = join(session.workspace, markerName);
    try {
      const turn = await w.send(session.id, "[tool] run the slow command");
      await w.waitForTurn(turn.id, (t) => t.effects.includes("tool_started"), "tool started", 60_000);
      expect(existsSync(marker)).toBe(false);
      await restart(w, how);
      const done = await w.waitForEnd(turn.id, 90_000);
      expect(done.phase, JSON.stringify(done.error)).toBe("completed");
      expect(readFileSync(marker, "utf8")).toBe("ran\n");
      const events = await w.events(turn.id);
      expect(contiguous(events)).toBe(true);
      expect(events.filter(({ event }) => event.type === "tool.started")).toHaveLength(1);
      expect(shownText(events)).toContain("after the tool");
      expect(await w.turns(session.id)).toHaveLength(1);
    } finally {
      rmSync(marker, { force: true });
    }
  });
});

describe("a kept turn's secret across a restart", () => {
  test.each(restarts)(
    "%s during a tool that reads the credential file later: the file is still there for it (confined), and removed at the turn's end",
    async (how) => {
      const secret = `kept-secret-${randomBytes(12).toString("hex")}`;
      const markerName = "credential-read.txt";
      // Its own credential dir is the one dir of the vault a confined command can read.
      const command = `sleep 4; f=$(ls "$FLOOT_RUNTIME_DIR"/*/secrets/*/cred-*); sha256sum < "$f" | cut -c1-64 >> ${markerName}`;
      world = await FlootWorld.create("claude", {
        steps: [
          {
            match: providedSecret(),
            response: {
              events: [
                {
                  type: "tool_use",
                  id: "toolu_reads_later",
                  name: "Bash",
                  input: { command, description: "Use the token later" },
                },
              ],
            },
          },
          {
            match: { toolResultFor: "toolu_reads_later" },
            response: { events: [{ type: "text", text: "used" }] },
          },
          requestSecretStep("[secret]"),
        ],
      });
      const w = world;
      await w.startDaemon();
      const session = await w.createSession();
      expect(session.sandbox?.enabled ?? true).toBe(true);
      const turn = await w.send(session.id, "[secret] deploy it");
      await w.waitForTurn(turn.id, (t) => t.phase === "awaiting_secret", "awaiting_secret");
      const [pending] = await w.secretRequests();
      await w.client.request("POST", `/v1/secret-requests/${pending!.id}/submit`, { value: secret });
      await w.waitForTurn(turn.id, (t) => t.effects.includes("tool_started"), "the tool started", 60_000);
      await restart(w, how);
      const done = await w.waitForEnd(turn.id, 90_000);
      expect(done.phase, JSON.stringify(done.error)).toBe("completed");
      const digest = createHash("sha256").update(secret).digest("hex");
      expect(readFileSync(join(session.workspace, markerName), "utf8")).toBe(`${digest}\n`);
      expect(filesUnder(w.runtimeDir).filter((path) => path.includes("cred-"))).toEqual([]);
      expect(filesContaining([w.stateDir], secret)).toEqual([]);
    },
    180_000,
  );
});

describe("the keeper", () => {
  test("a reboot (the keeper and its CLIs killed with the daemon) falls back to recovery: interrupted", async () => {
    const { w, turn, cli } = await stalledTurn("PARTIAL");
    await w.restartAfterReboot();
    const ended = await w.waitForEnd(turn.id);
    expect(ended.phase).toBe("interrupted");
    expect(isProcessAlive(cli.pid)).toBe(false);
  });

  test("once its last turn ends and the daemon stops, the keeper is gone", async () => {
    world = await FlootWorld.create("claude", {
      steps: [{ repeat: true, response: { events: [{ type: "text", text: "hi" }] } }],
    });
    const w = world;
    await w.startDaemon();
    const session = await w.createSession();
    const turn = await w.send(session.id, "hello");
    expect((await w.waitForEnd(turn.id)).phase).toBe("completed");
    const keeper = await w.keeperPid();
    expect(keeper).toBeDefined();
    await w.stopDaemon();
    await waitUntil(() => !isProcessAlive(keeper!), 10_000, "keeper exits with nothing kept");
  });
});

describe("floot daemon stop", () => {
  test("without --cancel-turns: the daemon exits, the turn's CLI goes on under the keeper, the next start adopts it", async () => {
    const { w, turn, cli } = await stalledTurn("WORKING");
    const daemon = w.daemon!;
    const stop = await w.floot("daemon", "stop");
    expect(stop, stop.stderr).toMatchObject({ code: 0, stdout: `daemon ${daemon.process.pid} stopped\n` });
    await daemon.process.exited;
    w.daemon = undefined;
    expect(isProcessAlive(cli.pid)).toBe(true);
    await w.startDaemon();
    expect((await w.turn(turn.id)).phase).toBe("running");
    expect(w.daemon!.process.stderr()).toContain("turn adopted from the keeper");
  });

  test("--cancel-turns: the running turn ends cancelled, its CLI and the keeper are gone", async () => {
    const { w, turn, cli } = await stalledTurn("WORKING");
    const keeper = await w.keeperPid();
    const daemon = w.daemon!;
    const stop = await w.floot("daemon", "stop", "--cancel-turns");
    expect(stop, stop.stderr).toMatchObject({ code: 0 });
    expect(stop.stdout).toContain("1 turn(s) cancelled");
    await daemon.process.exited;
    w.daemon = undefined;
    await waitUntil(
      () => !isProcessAlive(cli.pid) && !isProcessAlive(keeper!),
      10_000,
      "CLI and keeper gone",
    );
    await w.startDaemon();
    expect((await w.turn(turn.id)).phase).toBe("cancelled");
    // With nothing running, and then no daemon either, it says so and succeeds.
    const idle = w.daemon!;
    // (Its keeper, with nothing kept, ends with it: the stop may find it still ending.)
    expect((await w.floot("daemon", "stop", "--cancel-turns")).stdout).toMatch(
      new RegExp(`^daemon ${idle.process.pid} stopped(; the keeper ended)?\\n$`),
    );
    await idle.process.exited;
    w.daemon = undefined;
    expect(await w.floot("daemon", "stop", "--cancel-turns")).toMatchObject({
      code: 0,
      stdout: "no daemon was running\n",
    });
  });

  test("--cancel-turns without stop is a usage error", async () => {
    world = await FlootWorld.create("claude", { steps: [] });
    const result = await world.floot("daemon", "--cancel-turns");
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--cancel-turns");
  });
});

describe("another user and the keeper", () => {
  test("cannot connect to it, read its key or its spools, or take its socket's name", async () => {
    const { w } = await stalledTurn("SPOOLED");
    const places = keeperPlaces(w.stateRuntimeDir);
    const spools = readdirSync(places.spoolDir).map((name) => join(places.spoolDir, name));
    expect(spools.length).toBeGreaterThan(0);
    // The model double streams the reply in deltas whose cuts vary, so read the text they spell
    // (the turn's first delta may be journaled before its last one reaches the spool).
    await waitUntil(
      () => spelledText(readFileSync(spools[0]!, "utf8")).includes("SPOOLED"),
      10_000,
      "the reply spooled",
    );
    // Private by their own modes, not only by the dirs above them ...
    expect(statSync(w.stateRuntimeDir).mode & 0o777).toBe(0o700);
    expect(statSync(places.spoolDir).mode & 0o777).toBe(0o700);
    expect(statSync(places.keyPath).mode & 0o777).toBe(0o600);
    for (const spool of spools) expect(statSync(spool).mode & 0o777, spool).toBe(0o600);
    // ... and with every dir above them opened to others, still closed to the other uid.
    const opened = openAncestors(w.stateRuntimeDir);
    try {
      const thief = await promisify(execFile)(
        "setpriv",
        [
          "--reuid=65534",
          "--regid=65534",
          "--clear-groups",
          process.execPath,
          join(staged.root, "hostile/keeper-thief.mjs"),
          places.socketPath,
          places.keyPath,
          places.spoolDir,
          ...spools,
        ],
        { cwd: "/", env: { PATH: "/usr/bin:/bin" } },
      );
      expect(JSON.parse(thief.stdout)).toEqual({
        uid: 65534,
        connect: "EACCES",
        readKey: "EACCES",
        listSpools: "EACCES",
        readSpools: spools.map(() => "EACCES"),
        squat: "EACCES",
      });
    } finally {
      opened.restore();
    }
  });
});

let staged: ReturnType<typeof stageForOtherUsers>;
beforeAll(() => {
  staged = stageForOtherUsers({ hostile: join(appDir, "test/hostile") });
});
afterAll(() => staged.remove());

/** Makes every dir above `dir` (not `dir` itself) searchable by others, as a careless setup would. */
function openAncestors(dir: string): { restore(): void } {
  const changed: [string, number][] = [];
  for (let each = dirname(dir); each !== dirname(each); each = dirname(each)) {
    const mode = statSync(each).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      changed.push([each, mode]);
      chmodSync(each, mode | 0o011);
    }
  }
  return {
    restore: () => {
      for (const [each, mode] of changed) chmodSync(each, mode);
    },
  };
}

/** The text a stream-json spool's text deltas spell, in order. */
function spelledText(spool: string): string {
  return spool
    .split("\n")
    .filter((line) => line.includes('"text_delta"') && line.endsWith("}"))
    .map((line) => JSON.parse(line).event?.delta?.text ?? "")
    .join("");
}
