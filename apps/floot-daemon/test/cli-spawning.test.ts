import { readFileSync } from "node:fs";
import { findProcessesBySpawnMarker } from "@bridgeworks/backend-adapters";
import type { Backend } from "@bridgeworks/protocol";
import { waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import { commandLineOf, descendantsOf, FlootWorld } from "./daemon-harness.js";

// The daemon starts its CLIs through its spawner helper, never by a fork of its own, at its own priority
// by default, or below itself with `floot daemon --cli-nice N` (a CLI at nice 10 starved on a loaded
// machine: BENCHMARKS.md, cliNiceUnderLoad). Checked on the real CLIs while a turn waits on the model:
// the CLI is the helper's child, in a scheduling group of its own; with `--cli-nice` it, everything it
// started (the MCP shim included) and its group are niced, the daemon is not; a helper that dies is
// replaced by the next turn. And no more than `--cli-starts` of them start at once: a turn waits,
// accepted, until a start slot frees.

let world: FlootWorld | undefined;
afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

/** Field `n` of /proc/<pid>/stat; the fields after the command name start at field 3. */
function statField(pid: number, n: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[n - 3]);
}
const niceOf = (pid: number) => statField(pid, 19);
const parentOf = (pid: number) => statField(pid, 4);

const autogroupOf = (pid: number) => readFileSync(`/proc/${pid}/autogroup`, "utf8").trim();

/** The daemon's CLI spawner helper, once it runs. */
async function spawnerHelperOf(daemonPid: number): Promise<number> {
  let helper: number | undefined;
  await waitUntil(
    () => {
      helper = descendantsOf(daemonPid).find((pid) =>
        commandLineOf(pid).some((arg) => arg.endsWith("spawner.mjs")),
      );
      return helper !== undefined;
    },
    30_000,
    "the spawner helper",
  );
  return helper!;
}

/** What starts the daemon's CLIs: its spawner helper (`FLOOT_KEEPER=off`), or the keeper. */
async function starterOf(w: FlootWorld, starter: "spawner" | "keeper", daemonPid: number): Promise<number> {
  if (starter === "spawner") return spawnerHelperOf(daemonPid);
  const keeper = await w.keeperPid();
  if (keeper === undefined) throw new Error("no keeper answers");
  return keeper;
}

/** When a turn's first event of `type` (and, for a phase event, of `phase`) was journaled. */
async function journaledAt(w: FlootWorld, turnId: string, type: string, phase?: string): Promise<number> {
  const found = (await w.events(turnId)).find(
    ({ event }) =>
      event.type === type && (phase === undefined || ("phase" in event && event.phase === phase)),
  );
  if (!found) throw new Error(`turn ${turnId} has no ${type} ${phase ?? ""} event`);
  return Date.parse(found.at);
}

describe.each<Backend>(["claude", "codex"])("the priority of a turn's CLI: %s", (backend) => {
  /** A turn waiting on the model: its CLI and the processes carrying its spawn marker. */
  async function waitingTurn(w: FlootWorld, requestsBefore = 0) {
    const session = await w.createSession();
    const turn = await w.send(session.id, "[wait] hold on");
    const running = await w.waitForTurn(turn.id, (t) => t.phase === "running" && !!t.process, "running");
    await waitUntil(() => w.double.requests.length > requestsBefore, 60_000, "the CLI's model request");
    const marker = w.readTurnRow(turn.id)?.spawnMarker ?? "";
    const carriers = (findProcessesBySpawnMarker([marker]).get(marker) ?? []).map((p) => p.pid);
    return { turn: running, cli: running.process!.pid, carriers };
  }

  async function setUp(): Promise<FlootWorld> {
    world = await FlootWorld.create(backend, {
      steps: [{ response: { events: [{ type: "stall" }] }, repeat: true }],
    });
    return world;
  }

  test("by default the CLI, what it started and its scheduling group run at the daemon's nice 0", async () => {
    const w = await setUp();
    const daemon = await w.startDaemon();
    const { cli, carriers } = await waitingTurn(w);
    expect(carriers).toContain(cli);
    expect(carriers.length).toBeGreaterThan(1);
    for (const pid of carriers) expect(niceOf(pid), `pid ${pid}`).toBe(0);
    expect(autogroupOf(cli)).toMatch(/ nice 0$/);
    expect(niceOf(daemon.process.pid)).toBe(0);
    expect(autogroupOf(daemon.process.pid)).not.toBe(autogroupOf(cli));
  });

  test("--cli-nice 10 runs the CLI, what it started and its scheduling group at nice 10, the daemon at 0", async () => {
    const w = await setUp();
    const daemon = await w.startDaemon({}, {}, ["--cli-nice", "10"]);
    const { cli, carriers } = await waitingTurn(w);
    // The CLI and at least one process it started (its MCP shim connects before the first request).
    expect(carriers).toContain(cli);
    expect(carriers.length).toBeGreaterThan(1);
    for (const pid of carriers) expect(niceOf(pid), `pid ${pid}`).toBe(10);
    expect(autogroupOf(cli)).toMatch(/ nice 10$/);
    expect(niceOf(daemon.process.pid)).toBe(0);
    expect(autogroupOf(daemon.process.pid)).toMatch(/ nice 0$/);
    expect(autogroupOf(daemon.process.pid)).not.toBe(autogroupOf(cli));
  });

  test("with FLOOT_KEEPER=off the CLI is the spawner helper's child; a helper that dies is replaced by the next turn", async () => {
    const w = await setUp();
    const daemon = await w.startDaemon({ FLOOT_KEEPER: "off" });
    const first = await waitingTurn(w);
    const helper = parentOf(first.cli);
    expect(helper).not.toBe(daemon.process.pid);
    expect(parentOf(helper)).toBe(daemon.process.pid);

    process.kill(helper, "SIGKILL");
    await waitUntil(() => daemon.process.stderr().includes("CLI spawner exited"), 30_000, "the loss logged");
    // The first CLI lost its parent, not its pipes: the daemon still ends it and records the end.
    await w.client.request("POST", `/v1/turns/${first.turn.id}/cancel`);
    expect((await w.waitForEnd(first.turn.id)).phase).toBe("cancelled");
    const second = await waitingTurn(w, w.double.requests.length);
    const replacement = parentOf(second.cli);
    expect(replacement).not.toBe(helper);
    expect(parentOf(replacement)).toBe(daemon.process.pid);
  });

  test("the CLI is the keeper's child, and the keeper is in a session of its own, not the daemon's", async () => {
    const w = await setUp();
    const daemon = await w.startDaemon();
    const { cli } = await waitingTurn(w);
    const keeper = (await w.keeperPid())!;
    expect(parentOf(cli)).toBe(keeper);
    const sessionOf = (pid: number) => statField(pid, 6);
    expect(sessionOf(keeper)).toBe(keeper);
    expect(sessionOf(keeper)).not.toBe(sessionOf(daemon.process.pid));
  });

  test.each(["spawner", "keeper"] as const)(
    "a cancel while the CLI starts (the %s holding it) ends the turn cancelled, kills the CLI and logs no failure",
    async (starter) => {
      const w = await setUp();
      const daemon = await w.startDaemon(starter === "spawner" ? { FLOOT_KEEPER: "off" } : {});
      const helper = await starterOf(w, starter, daemon.process.pid);
      // A stopped helper holds the spawn request: the turn waits in the window between `spawning` and its pid.
      process.kill(helper!, "SIGSTOP");
      let turnId = "";
      try {
        const session = await w.createSession();
        turnId = (await w.send(session.id, "[wait] hold on")).id;
        await waitUntil(() => w.readTurnRow(turnId)?.phase === "spawning", 30_000, "spawning");
        await w.client.request("POST", `/v1/turns/${turnId}/cancel`);
        expect(w.readTurnRow(turnId)?.phase).toBe("cancelled");
      } finally {
        process.kill(helper!, "SIGCONT");
      }
      const stderr = () => daemon.process.stderr();
      await waitUntil(
        () => stderr().includes("turn cancelled while its CLI started"),
        30_000,
        "the cancel logged",
      );
      expect(stderr()).not.toContain("turn could not run");
      expect(stderr()).not.toContain('"level":"error"');
      // The CLI the helper started late was killed: nothing carries the turn's marker.
      const marker = w.readTurnRow(turnId)?.spawnMarker ?? "";
      expect(marker).not.toBe("");
      await waitUntil(
        () => (findProcessesBySpawnMarker([marker]).get(marker) ?? []).length === 0,
        30_000,
        "the late CLI gone",
      );
      expect(w.readTurnRow(turnId)?.phase).toBe("cancelled");
    },
  );

  test.each(["spawner", "keeper"] as const)(
    "with one start slot a turn waits, accepted, until the CLI before it speaks (the %s stopped); a cancel ends its wait",
    async (starter) => {
      const w = await setUp();
      // The second turn to reach its start is logged there (a 1 ms hold): its wait is then observable.
      const daemon = await w.startDaemon(
        { FLOOT_CLI_START_HOLD_MS: "600000", ...(starter === "spawner" && { FLOOT_KEEPER: "off" }) },
        { "turn:starting": { action: "hold", ms: 1, skip: 1 } },
        ["--cli-starts", "1"],
      );
      const helper = await starterOf(w, starter, daemon.process.pid);
      process.kill(helper, "SIGSTOP");
      let first = "";
      let third = "";
      try {
        first = (await w.send((await w.createSession()).id, "[wait] hold on")).id;
        await waitUntil(() => w.readTurnRow(first)?.phase === "spawning", 30_000, "the first turn spawning");
        const second = (await w.send((await w.createSession()).id, "[wait] hold on")).id;
        await waitUntil(() => w.faultHits().length > 0, 30_000, "the second turn at its start");
        expect(w.faultHits()[0]?.data).toMatchObject({ turnId: second });
        // Asked over HTTP: answered after the loop turn that reached the start, slot or no slot.
        expect((await w.turn(second)).phase).toBe("accepted");

        await w.client.request("POST", `/v1/turns/${second}/cancel`);
        expect((await w.turn(second)).phase).toBe("cancelled");
        expect(w.readTurnRow(second)?.spawnMarker).toBeNull();
        third = (await w.send((await w.createSession()).id, "[wait] hold on")).id;
      } finally {
        process.kill(helper, "SIGCONT");
      }
      for (const turnId of [first, third]) {
        await w.waitForTurn(turnId, (t) => t.phase === "running", "running");
      }
      // The third went `spawning` only once the first CLI had spoken (its `backend.started`).
      expect(await journaledAt(w, third, "phase", "spawning")).toBeGreaterThanOrEqual(
        await journaledAt(w, first, "backend.started"),
      );
      expect(daemon.process.stderr()).not.toContain('"level":"error"');
      for (const turnId of [first, third]) {
        await w.client.request("POST", `/v1/turns/${turnId}/cancel`);
        expect((await w.waitForEnd(turnId)).phase).toBe("cancelled");
      }
    },
  );

  test.each(["spawner", "keeper"] as const)(
    "a start that holds its slot past FLOOT_CLI_START_HOLD_MS (the %s stopped) lets the next turn start",
    async (starter) => {
      const w = await setUp();
      const daemon = await w.startDaemon(
        { FLOOT_CLI_START_HOLD_MS: "300", ...(starter === "spawner" && { FLOOT_KEEPER: "off" }) },
        {},
        ["--cli-starts", "1"],
      );
      const helper = await starterOf(w, starter, daemon.process.pid);
      // The helper stopped: the first CLI never speaks, and only the hold frees its slot.
      process.kill(helper, "SIGSTOP");
      const turns: string[] = [];
      try {
        turns.push((await w.send((await w.createSession()).id, "[wait] hold on")).id);
        turns.push((await w.send((await w.createSession()).id, "[wait] hold on")).id);
        for (const turnId of turns) {
          await waitUntil(() => w.readTurnRow(turnId)?.phase === "spawning", 30_000, `${turnId} spawning`);
        }
      } finally {
        process.kill(helper, "SIGCONT");
      }
      for (const turnId of turns) {
        await w.waitForTurn(turnId, (t) => t.phase === "running", "running");
        await w.client.request("POST", `/v1/turns/${turnId}/cancel`);
        expect((await w.waitForEnd(turnId)).phase).toBe("cancelled");
      }
    },
  );
});
