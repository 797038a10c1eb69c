// pnpm bench: restart-to-ready with a large journal, accept-to-spawn latency, SSE follow latency to
// 100 observers, the pre-tool gate's cost per tool call, full-text search over 1,000,000 events, a
// follower's gap across a restart against restart-to-ready and the keeper's cost per event against the
// direct pipe (keeper-bench.mjs). Prints one JSON document. The CLI is bench/fake-claude.mjs: this
// measures the daemon; except in cliNiceUnderLoad, which times the real claude's turns at each CLI
// priority beside a CPU hog (cli-nice-load.mjs).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openJournal } from "@bridgeworks/turn-journal";
import { cliNiceUnderLoad } from "./cli-nice-load.mjs";
import {
  api,
  children,
  observe,
  startDaemon as startIn,
  stats,
  stopDaemon,
  waitEnded,
} from "./daemon-kit.mjs";
import { followerGapAcrossRestart, keeperCostPerEvent } from "./keeper-bench.mjs";
import { loadProfile } from "./load-profile.mjs";
import { searchLatency } from "./search-latency.mjs";

const root = mkdtempSync(join(tmpdir(), "floot-bench-"));
const startDaemon = (stateDir, env = {}) => startIn(root, stateDir, { env });

async function restartToReady() {
  const stateDir = join(root, "large");
  mkdirSync(stateDir, { recursive: true });
  const journal = openJournal({ path: join(stateDir, "journal.sqlite"), synchronous: "NORMAL" });
  const populateStart = performance.now();
  for (let s = 0; s < 100; s += 1) {
    const session = journal.sessions.createSession({ backend: "claude" });
    for (let t = 0; t < 100; t += 1) {
      const turn = journal.turns.submitTurn(session.id, { prompt: `turn ${t}` });
      journal.turns.transition(turn.id, {
        phase: "spawning",
        conversationId: "00000000-0000-4000-8000-000000000001",
      });
      journal.turns.transition(turn.id, { phase: "running", process: { pid: 999999, startTime: "1" } });
      journal.events.appendEvents(turn.id, [
        { type: "assistant.text", text: `answer ${t}` },
        { type: "usage", input: 10, output: 5 },
      ]);
      // The last turn of every session is left running: recovery has 100 turns to fence and decide.
      if (t < 99) journal.turns.transition(turn.id, { phase: "completed" });
    }
  }
  journal.maintenance.close();
  const populateMs = performance.now() - populateStart;
  const readyMs = [];
  for (let round = 0; round < 3; round += 1) {
    const { child, readyMs: ms } = await startDaemon(stateDir);
    readyMs.push(ms);
    await stopDaemon(child);
  }
  return {
    sessions: 100,
    turns: 10_000,
    unfinishedAtFirstStart: 100,
    populateMs: Math.round(populateMs),
    readyMs: stats(readyMs),
    firstStartMs: Math.round(readyMs[0]),
  };
}

async function acceptToSpawn() {
  const stateDir = join(root, "spawn");
  const { child, file } = await startDaemon(stateDir);
  const call = api(file);
  const session = await call("POST", "/v1/sessions", { backend: "claude" });
  const samples = [];
  for (let i = 0; i < 30; i += 1) {
    const turn = await call("POST", `/v1/sessions/${session.id}/turns`, { prompt: `bench ${i}` });
    await waitEnded(call, turn.id);
    const { events } = await call("GET", `/v1/turns/${turn.id}/events`);
    const accepted = events.find((e) => e.event.type === "phase" && e.event.phase === "accepted");
    const running = events.find((e) => e.event.type === "phase" && e.event.phase === "running");
    samples.push(Date.parse(running.at) - Date.parse(accepted.at));
  }
  await stopDaemon(child);
  return { turns: samples.length, acceptedToSpawnedMs: stats(samples) };
}

async function followLatency() {
  const stateDir = join(root, "follow");
  const { child, file } = await startDaemon(stateDir, { FAKE_CLAUDE_LINES: "50", FAKE_CLAUDE_GAP_MS: "20" });
  const call = api(file);
  const session = await call("POST", "/v1/sessions", { backend: "claude" });
  const turn = await call("POST", `/v1/sessions/${session.id}/turns`, { prompt: "stream" });
  const latencies = [];
  const observers = Array.from({ length: 100 }, () => observe(file, turn.id, latencies));
  const counts = await Promise.all(observers);
  await stopDaemon(child);
  return { observers: 100, eventsPerObserver: stats(counts).p50, commitToObserverMs: stats(latencies) };
}

/**
 * What the gate adds to each tool call: the hook (a node process) asks the daemon, which commits the
 * call (fsync) before it answers. Baseline, measured in the same run: `sh -c 'node -e 0'`, the bare
 * cost of starting the hook's node.
 */
async function gateLatency() {
  const stateDir = join(root, "gate");
  const log = join(root, "gate.log");
  const calls = 40;
  const { child, file } = await startDaemon(stateDir, {
    FAKE_CLAUDE_TOOL_CALLS: String(calls),
    FAKE_CLAUDE_GATE_LOG: log,
  });
  const call = api(file);
  const session = await call("POST", "/v1/sessions", { backend: "claude" });
  const turn = await call("POST", `/v1/sessions/${session.id}/turns`, { prompt: "tools" });
  const ended = await waitEnded(call, turn.id);
  await stopDaemon(child);
  const runs = readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map((line) => line.split(" ").map(Number));
  const admitted = runs.filter(([, status]) => status === 0).length;
  const baseline = [];
  for (let i = 0; i < calls; i += 1) {
    const startedAt = performance.now();
    spawnSync("/bin/sh", ["-c", `'${process.execPath}' -e 0`]);
    baseline.push(performance.now() - startedAt);
  }
  const gate = stats(runs.map(([ms]) => ms));
  const bare = stats(baseline);
  return {
    calls,
    admitted,
    turn: ended.phase,
    gateMs: gate,
    bareNodeStartMs: bare,
    ratioP50: Math.round((gate.p50 / bare.p50) * 100) / 100,
  };
}

// `node bench/daemon.bench.mjs [--scale=F] [--cpu-prof-dir=DIR] [--cli-nice=N] [--cli-starts=N]
// [section...]` runs only the named sections; `--scale` shrinks the load profile's journal,
// `--cpu-prof-dir` profiles its daemon, `--cli-nice` and `--cli-starts` start that daemon with them
// (an A/B of the CLIs' priority, of how many start at once); `--nice-turns` is how many turns
// cliNiceUnderLoad times in each mode.
const { values: flags, positionals: chosen } = parseArgs({
  options: {
    scale: { type: "string", default: "1" },
    "cpu-prof-dir": { type: "string" },
    "cli-nice": { type: "string" },
    "cli-starts": { type: "string" },
    "nice-turns": { type: "string", default: "8" },
  },
  allowPositionals: true,
});
const scale = Number(flags.scale);
if (!(scale > 0 && scale <= 1)) throw new Error(`--scale: a number in (0, 1], got ${flags.scale}`);
const niceTurns = Number(flags["nice-turns"]);
if (!(Number.isInteger(niceTurns) && niceTurns >= 1))
  throw new Error(`--nice-turns: an integer of at least 1, got ${flags["nice-turns"]}`);
const sections = {
  restartToReady,
  acceptToSpawn,
  followLatency,
  gateLatency,
  searchLatency: () => searchLatency(root, { scale }),
  followerGapAcrossRestart: () => followerGapAcrossRestart(root),
  keeperCostPerEvent: () => keeperCostPerEvent(root),
  loadProfile: () =>
    loadProfile(root, {
      scale,
      cpuProfileDir: flags["cpu-prof-dir"],
      ...(flags["cli-nice"] !== undefined && { cliNice: flags["cli-nice"] }),
      ...(flags["cli-starts"] !== undefined && { cliStarts: flags["cli-starts"] }),
    }),
  cliNiceUnderLoad: () => cliNiceUnderLoad(root, { turns: niceTurns }),
};
for (const name of chosen) if (!(name in sections)) throw new Error(`unknown bench section ${name}`);

try {
  const results = { node: process.version };
  for (const [name, run] of Object.entries(sections)) {
    if (chosen.length === 0 || chosen.includes(name)) results[name] = await run();
  }
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
} finally {
  for (const child of children) child.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
}
