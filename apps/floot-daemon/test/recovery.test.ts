import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mintSpawnMarker, spawnMarkerVariable } from "@bridgeworks/backend-adapters";
import type { TurnRecord } from "@bridgeworks/protocol";
import { createLogger, type Logger } from "@bridgeworks/runtime";
import { isProcessAlive, waitUntil } from "@bridgeworks/test-harness";
import { openJournal, type TurnJournal } from "@bridgeworks/turn-journal";
import { afterEach, describe, expect, test } from "vitest";
import { type RunningDaemon, startDaemon } from "../src/daemon/daemon.js";
import { recoverTurns } from "../src/daemon/recovery.js";
import { journalFileName } from "../src/state-dir.js";

const children: ChildProcess[] = [];
const pidsToEnd: number[] = [];
let daemon: RunningDaemon | undefined;
let journal: TurnJournal | undefined;
let root: string | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  journal?.maintenance.close();
  journal = undefined;
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  for (const pid of pidsToEnd.splice(0)) if (isProcessAlive(pid)) process.kill(pid, "SIGKILL");
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function tempRoot(): string {
  root = mkdtempSync(join(tmpdir(), "floot-recovery-"));
  return root;
}

function environmentOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
}

/** A stand-in for a leftover CLI (or one of its children): a detached node process carrying `marker`. */
function markedProcess(marker: string): number {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", [spawnMarkerVariable]: marker },
    detached: true,
    stdio: "ignore",
  });
  children.push(child);
  if (child.pid === undefined) throw new Error("node did not start");
  return child.pid;
}

function startTimeOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
}

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return Object.assign(createLogger({ component: "test", write: (line) => lines.push(line) }), { lines });
}

describe("recovery by spawn marker", () => {
  test("a turn left spawning without a process: the CLI carrying its marker is fenced and listed", async () => {
    journal = openJournal({ path: join(tempRoot(), journalFileName) });
    const session = journal.sessions.createSession({ backend: "claude" });
    const turn = journal.turns.submitTurn(session.id, { prompt: "hi" });
    const spawnMarker = mintSpawnMarker();
    journal.turns.transition(turn.id, { phase: "spawning", spawnMarker });
    // The daemon died after spawn() and before it could journal `running` with the pid.
    const cli = markedProcess(spawnMarker);
    const unrelated = markedProcess(mintSpawnMarker());
    const logger = recordingLogger();

    const report = await recoverTurns(journal, logger);

    expect(report.fenced).toEqual([
      { turnId: turn.id, pid: cli, foundBy: "spawn_marker", outcome: "terminated" },
    ]);
    await waitUntil(() => !isProcessAlive(cli), 5_000, "the leftover CLI ended");
    expect(isProcessAlive(unrelated)).toBe(true);
    expect(report.outcomes.map(({ decision }) => decision.action)).toEqual(["replay"]);
    expect(journal.turns.getTurn(turn.id)?.phase).toBe("interrupted");
    const replay = journal.turns.listTurns(session.id).find((other) => other.replayOf === turn.id);
    expect(replay).toMatchObject({ phase: "accepted", attempt: 2 });
    expect(replay).not.toHaveProperty("spawnMarker");
    expect(logger.lines.some((line) => line.includes('"foundBy":"spawn_marker"'))).toBe(true);
    expect(logger.lines.join("\n")).not.toContain(spawnMarker);
  });

  test("recovery's commits do not fsync one by one; the journal is FULL again after it", async () => {
    const opened = openJournal({ path: join(tempRoot(), journalFileName) });
    journal = opened;
    const turns = ["one", "two", "three"].map((prompt) => {
      const session = opened.sessions.createSession({ backend: "claude" });
      const turn = opened.turns.submitTurn(session.id, { prompt });
      opened.turns.transition(turn.id, { phase: "spawning" });
      return opened.turns.transition(turn.id, {
        phase: "running",
        process: { pid: 999_999, startTime: "1" },
      });
    });
    const modes: string[] = [];
    for (const turn of turns)
      opened.events.subscribe(turn.id, () => modes.push(opened.maintenance.durability().synchronous));

    const report = await recoverTurns(opened, recordingLogger(), { fence: async () => "not-running" });

    expect(report.outcomes.map(({ decision }) => decision.action)).toEqual(["replay", "replay", "replay"]);
    expect(modes).toEqual(["NORMAL", "NORMAL", "NORMAL"]);
    expect(opened.maintenance.durability().synchronous).toBe("FULL");
  });

  test("a running turn: its recorded CLI and a marked process outside the CLI's group are both fenced", async () => {
    journal = openJournal({ path: join(tempRoot(), journalFileName) });
    const session = journal.sessions.createSession({ backend: "codex" });
    const turn = journal.turns.submitTurn(session.id, { prompt: "hi" });
    const spawnMarker = mintSpawnMarker();
    journal.turns.transition(turn.id, { phase: "spawning", spawnMarker });
    const cli = markedProcess(spawnMarker);
    journal.turns.transition(turn.id, {
      phase: "running",
      process: { pid: cli, startTime: startTimeOf(cli) },
    });
    const escaped = markedProcess(spawnMarker);

    const report = await recoverTurns(journal, recordingLogger());

    expect(report.fenced).toEqual([
      { turnId: turn.id, pid: cli, foundBy: "process", outcome: "terminated" },
      { turnId: turn.id, pid: escaped, foundBy: "spawn_marker", outcome: "terminated" },
    ]);
    await waitUntil(() => !isProcessAlive(cli) && !isProcessAlive(escaped), 5_000, "both processes ended");
  });
});

describe("the daemon and spawn markers", () => {
  test("at start it fences a marked leftover, and each CLI it spawns carries the marker it journaled", async () => {
    const base = tempRoot();
    const stateDir = join(base, "state");
    const fakeClaude = join(base, "fake-claude.sh");
    writeFileSync(fakeClaude, "#!/bin/sh\nexec sleep 300\n", { mode: 0o755 });
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const before = openJournal({ path: join(stateDir, journalFileName) });
    const session = before.sessions.createSession({ backend: "claude" });
    const turn = before.turns.submitTurn(session.id, { prompt: "hi" });
    const leftoverMarker = mintSpawnMarker();
    before.turns.transition(turn.id, { phase: "spawning", spawnMarker: leftoverMarker });
    before.maintenance.close();
    const leftover = markedProcess(leftoverMarker);

    daemon = await startDaemon({
      stateDir,
      env: {
        FLOOT_RUNTIME_DIR: join(base, "run"),
        FLOOT_CLAUDE_COMMAND: fakeClaude,
        CLAUDE_CONFIG_DIR: join(base, "claude"),
        PATH: process.env.PATH,
      },
      logger: recordingLogger(),
    });

    expect(daemon.recovery.fenced).toEqual([
      { turnId: turn.id, pid: leftover, foundBy: "spawn_marker", outcome: "terminated" },
    ]);
    expect(isProcessAlive(leftover)).toBe(false);
    const { token } = JSON.parse(readFileSync(join(stateDir, "daemon.json"), "utf8")) as { token: string };
    const turns = async () => {
      const response = await fetch(`http://127.0.0.1:${daemon!.port}/v1/sessions/${session.id}/turns`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return ((await response.json()) as { turns: TurnRecord[] }).turns;
    };
    let replay: TurnRecord | undefined;
    await waitUntil(
      async () => {
        replay = (await turns()).find((other) => other.replayOf === turn.id && other.process !== undefined);
        return replay !== undefined;
      },
      10_000,
      "the replay is running",
    );
    const cli = replay!.process!.pid;
    pidsToEnd.push(cli);
    expect(replay!.spawnMarker).toMatch(/^[0-9a-f]{32}$/);
    expect(replay!.spawnMarker).not.toBe(leftoverMarker);
    expect(environmentOf(cli)).toContain(`${spawnMarkerVariable}=${replay!.spawnMarker}`);
  });
});
