import { existsSync, readFileSync, watch } from "node:fs";
import { join } from "node:path";
import { findProcessesBySpawnMarker, isSameProcess } from "@bridgeworks/backend-adapters";
import type { Backend, TurnEventEnvelope, TurnRecord } from "@bridgeworks/protocol";
import { openJournal } from "@bridgeworks/turn-journal";
import { type TracePoint, tracePoints } from "../../src/daemon/trace.js";
import { journalFileName } from "../../src/state-dir.js";
import { type DaemonFaults, FlootWorld } from "../daemon-harness.js";
import { type BackgroundLoad, populateJournal, startLoad } from "./load.js";
import {
  type CallLabel,
  callLabels,
  effectCommand,
  effectsFileName,
  tortureMarker,
  tortureScript,
} from "./script.js";

/**
 * Where a trial kills the daemon. Trace points are hit inside the daemon (the fault preload SIGKILLs
 * it there); `after-effect` kills it from outside the instant a tool's line lands in the effects
 * file; `random` after a random delay; `recovery` kills it at a random moment and then kills the
 * restarted daemon again in the middle of its recovery.
 */
export type KillPoint = Exclude<TracePoint, `recovery:${string}`> | "after-effect" | "random" | "recovery";
export const killPoints: readonly KillPoint[] = [
  ...tracePoints.filter(
    (point): point is Exclude<TracePoint, `recovery:${string}`> => !point.startsWith("recovery:"),
  ),
  "after-effect",
  "random",
  "recovery",
];

/**
 * The torture kills the daemon and checks what recovery makes of each turn: its CLIs run without the
 * keeper (`FLOOT_KEEPER=off`), so they end with the daemon, as after a reboot. A torture of the keeper
 * itself (kills at SIGTERM, mid-spool, during adoption, of the keeper) is issue 31's part 7, not built.
 */
const recoveryOnly = { FLOOT_KEEPER: "off" };

export interface TortureOptions {
  backend: Backend;
  trials: number;
  /** Seeds the choice of points, skips and delays: the same seed runs the same plan. */
  seed: number;
  /** Chosen from at random per trial (seeded); default every point. */
  points?: readonly KillPoint[];
  /** `cycle`: trial n takes points[n mod length] instead of a random one. */
  order?: "random" | "cycle";
  /** after-effect: kill after this many effect lines instead of a random 1 or 2. */
  afterEffectLines?: number;
  /** Background sessions written into the journal before the first start. */
  sessions: number;
  /** Clients polling `GET /v1/overview` throughout. */
  pollers: number;
  /** Clients following (SSE) background turns throughout. */
  followers: number;
  /** Each poller's pause between two polls; default 2500 ms, the web UI's own rate. */
  pollPauseMs?: number;
  /** How long a trial's turns may take to end after the restart. */
  settleTimeoutMs?: number;
  /** Progress lines (one per trial). */
  progress?: (line: string) => void;
}

export interface Violation {
  trial: number;
  point: KillPoint;
  invariant:
    | "effect_repeated"
    | "effect_unrecorded"
    | "replayed_with_effects"
    | "event_lost_or_reordered"
    | "turn_stuck"
    | "orphan_process"
    | "journal_inconsistent"
    | "trial_error";
  detail: string;
}

export interface TrialRecord {
  trial: number;
  point: KillPoint;
  plan: string;
  /** The planned kill happened (a point the turn never reached does not fire). */
  fired: boolean;
  phases: string[];
  effectLines: Record<CallLabel, number>;
  violations: Violation[];
  ms: number;
  /** Where the trial's time went, ms per step. */
  steps: Record<string, number>;
}

export interface TortureSummary {
  backend: Backend;
  trials: number;
  seed: number;
  sessionsInJournal: number;
  pollers: number;
  pollPauseMs: number;
  followers: number;
  /** Per point: trials that planned it, and how many actually killed the daemon there. */
  kills: Record<string, { planned: number; fired: number }>;
  /** Final phases of every trial turn (replays included). */
  phases: Record<string, number>;
  /** Per tool call: trials where its effect happened once, and where it never happened. */
  effects: Record<CallLabel, { once: number; never: number; moreThanOnce: number }>;
  violations: Violation[];
  load: {
    overviewPolls: number;
    overviewFailures: number;
    overviewMs: { p50: number; p99: number };
    followsCompleted: number;
  };
  durationMs: number;
}

interface TrialPlan {
  trial: number;
  point: KillPoint;
  /** Trace-point hits to let pass first (which event, which call). */
  skip: number;
  /** after-effect: kill once this many effect lines landed. */
  lines: number;
  /** random / recovery: ms after the send. */
  delayMs: number;
  recoveryPoint: Extract<TracePoint, `recovery:${string}`>;
}

const terminalPhases = new Set(["completed", "failed", "cancelled", "interrupted"]);

/** Runs `trials` crash trials against one daemon state dir under background load; never throws a trial's error. */
export async function runTorture(options: TortureOptions): Promise<TortureSummary> {
  const startedAt = Date.now();
  const random = mulberry32(options.seed);
  const points = options.points ?? killPoints;
  const world = await FlootWorld.create(options.backend, tortureScript(options.backend));
  const summary: TortureSummary = {
    backend: options.backend,
    trials: options.trials,
    seed: options.seed,
    sessionsInJournal: options.sessions,
    pollers: options.pollers,
    pollPauseMs: options.pollPauseMs ?? 2_500,
    followers: options.followers,
    kills: Object.fromEntries(points.map((point) => [point, { planned: 0, fired: 0 }])),
    phases: {},
    effects: {
      call1: { once: 0, never: 0, moreThanOnce: 0 },
      call2: { once: 0, never: 0, moreThanOnce: 0 },
    },
    violations: [],
    load: { overviewPolls: 0, overviewFailures: 0, overviewMs: { p50: 0, p99: 0 }, followsCompleted: 0 },
    durationMs: 0,
  };
  let load: BackgroundLoad | undefined;
  try {
    const { mkdirSync } = await import("node:fs");
    mkdirSync(world.stateDir, { recursive: true, mode: 0o700 });
    const turnIds = populateJournal(world.stateDir, options.sessions);
    load = startLoad(world.stateDir, {
      pollers: options.pollers,
      followers: options.followers,
      turnIds,
      pauseMs: options.pollPauseMs ?? 2_500,
    });
    for (let trial = 1; trial <= options.trials; trial += 1) {
      const drawn = Math.floor(random() * points.length);
      const point = points[options.order === "cycle" ? (trial - 1) % points.length : drawn]!;
      const plan: TrialPlan = {
        trial,
        point,
        // Mid-stream: any of the first events; at the gate: call1's or call2's; elsewhere the first hit.
        skip:
          point === "turn:event"
            ? Math.floor(random() * 12)
            : point.startsWith("gate:")
              ? Math.floor(random() * 2)
              : 0,
        lines: options.afterEffectLines ?? 1 + Math.floor(random() * 2),
        delayMs: Math.floor(random() * 4_000),
        recoveryPoint: random() < 0.5 ? "recovery:fenced" : "recovery:applied",
      };
      const record = await runTrial(world, plan, options.settleTimeoutMs ?? 120_000);
      summary.kills[point]!.planned += 1;
      if (record.fired) summary.kills[point]!.fired += 1;
      for (const phase of record.phases) summary.phases[phase] = (summary.phases[phase] ?? 0) + 1;
      for (const label of callLabels) {
        const count = record.effectLines[label];
        const tally = summary.effects[label];
        if (count === 0) tally.never += 1;
        else if (count === 1) tally.once += 1;
        else tally.moreThanOnce += 1;
      }
      summary.violations.push(...record.violations);
      options.progress?.(
        JSON.stringify({
          trial,
          point,
          plan: record.plan,
          fired: record.fired,
          phases: record.phases,
          effects: record.effectLines,
          violations: record.violations.length,
          ms: record.ms,
          steps: record.steps,
        }),
      );
    }
  } finally {
    await load?.stop();
    if (load) {
      const sorted = [...load.stats.overviewMs].sort((a, b) => a - b);
      const pick = (q: number) =>
        Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
      summary.load = {
        overviewPolls: load.stats.overviewPolls,
        overviewFailures: load.stats.overviewFailures,
        overviewMs: { p50: pick(0.5), p99: pick(0.99) },
        followsCompleted: load.stats.followsCompleted,
      };
    }
    const problems = await world.dispose();
    for (const detail of problems) {
      summary.violations.push({ trial: 0, point: "random", invariant: "journal_inconsistent", detail });
    }
    summary.durationMs = Date.now() - startedAt;
  }
  return summary;
}

async function runTrial(world: FlootWorld, plan: TrialPlan, settleTimeoutMs: number): Promise<TrialRecord> {
  const startedAt = Date.now();
  const violations: Violation[] = [];
  const violate = (invariant: Violation["invariant"], detail: string) =>
    violations.push({ trial: plan.trial, point: plan.point, invariant, detail });
  const planText = describePlan(plan);
  let fired = false;
  let phases: string[] = [];
  let effectLines: Record<CallLabel, number> = { call1: 0, call2: 0 };
  const steps: Record<string, number> = {};
  let stepStart = Date.now();
  const step = (name: string) => {
    const now = Date.now();
    steps[name] = now - stepStart;
    stepStart = now;
  };
  try {
    await world.startDaemon(recoveryOnly, firstFaults(plan));
    step("start");
    const session = await api(world, () => world.createSession());
    const effectsFile = join(session.workspace, effectsFileName);
    const turn = await api(world, () => world.send(session.id, `${tortureMarker} trial ${plan.trial}`));
    const seen: TurnEventEnvelope[] = [];
    void world.client.follow(turn.id, 0, (envelope) => seen.push(envelope)).catch(() => {});

    fired = await killAsPlanned(world, plan, turn.id, effectsFile);
    if (world.daemon) {
      // The point was never reached: the turn ended first. Stop the daemon the ordinary way.
      await stopGracefully(world);
    }
    step("turn");

    // The journal as the crash left it: consistent, and holding every event a follower was shown.
    const crashed = readJournal(world, session.id);
    for (const detail of crashed.problems) violate("journal_inconsistent", `after the kill: ${detail}`);
    for (const envelope of seen) {
      const stored = crashed.events.get(envelope.turnId)?.[envelope.index];
      if (JSON.stringify(stored) !== JSON.stringify(envelope))
        violate(
          "event_lost_or_reordered",
          `event ${envelope.index} of ${envelope.turnId} shown before the kill is not stored as shown`,
        );
    }

    if (plan.point === "recovery" && fired) {
      const outcome = await startDaemonOrExit(world, { [plan.recoveryPoint]: { action: "kill" } });
      if (outcome === "ready") await stopGracefully(world);
      const again = readJournal(world, session.id);
      for (const detail of again.problems)
        violate("journal_inconsistent", `after the recovery kill: ${detail}`);
    }

    await world.startDaemon(recoveryOnly);
    step("restart");
    const turns = await settle(world, session.id, settleTimeoutMs);
    step("settle");
    phases = turns.map((entry) => entry.phase);
    for (const entry of turns) {
      if (!terminalPhases.has(entry.phase)) violate("turn_stuck", `turn ${entry.id} is still ${entry.phase}`);
    }
    await stopGracefully(world);
    step("stop");

    const final = readJournal(world, session.id);
    for (const detail of final.problems) violate("journal_inconsistent", `after settling: ${detail}`);
    for (const [turnId, events] of crashed.events) {
      const now = final.events.get(turnId) ?? [];
      events.forEach((event, index) => {
        if (JSON.stringify(now[index]) !== JSON.stringify(event))
          violate(
            "event_lost_or_reordered",
            `event ${index} of ${turnId} changed or vanished after the restart`,
          );
      });
    }

    effectLines = countEffects(effectsFile);
    const admitted = final.admitted;
    for (const label of callLabels) {
      if (effectLines[label] > 1) violate("effect_repeated", `${label} ran ${effectLines[label]} times`);
      if (effectLines[label] > 0 && !admitted.some((preview) => preview.includes(effectCommand(label))))
        violate("effect_unrecorded", `${label} ran with no gate record of it in the journal`);
    }
    for (const entry of turns) {
      if (entry.replayOf === undefined) continue;
      const original = turns.find((other) => other.id === entry.replayOf);
      if (original && original.effects.length > 0)
        violate(
          "replayed_with_effects",
          `turn ${original.id} had ${original.effects.join(",")} and was replayed`,
        );
    }
    const markers = turns.flatMap((entry) => entry.spawnMarker ?? []);
    const left = [...findProcessesBySpawnMarker(markers).values()].flat();
    for (const process of left)
      violate("orphan_process", `pid ${process.pid} still carries a marker of this trial`);
    for (const entry of turns) {
      if (entry.process && isSameProcess(entry.process))
        violate("orphan_process", `the CLI of turn ${entry.id} (pid ${entry.process.pid}) is still running`);
    }
    step("final-check");
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    violate("trial_error", message.includes("(the daemon ") ? message : `${message}${daemonState(world)}`);
    if (world.daemon) await world.killDaemon().catch(() => {});
    world.daemon = undefined;
  }
  return {
    trial: plan.trial,
    point: plan.point,
    plan: planText,
    fired,
    phases,
    effectLines,
    violations,
    ms: Date.now() - startedAt,
    steps,
  };
}

/**
 * One API call, tried again while the daemon process still runs: the daemon listens on the same port
 * after each restart, so a client's pooled keep-alive connection to the killed one fails once
 * (`fetch failed`). A daemon that has exited is no such case: its state goes into the error.
 */
async function api<T>(world: FlootWorld, call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      const child = world.daemon?.process.child;
      const running = child !== undefined && child.exitCode === null && child.signalCode === null;
      if (!running || attempt >= 5 || !String(error).includes("not reachable")) {
        throw new Error(`${error instanceof Error ? error.message : String(error)}${daemonState(world)}`);
      }
      await sleep(250 * attempt);
    }
  }
}

/** Whether the current daemon still runs, and if not how it ended and what it last wrote. */
function daemonState(world: FlootWorld): string {
  const daemon = world.daemon;
  if (!daemon) return " (no daemon was running)";
  const { exitCode, signalCode } = daemon.process.child;
  const ended = exitCode !== null || signalCode !== null;
  const tail = daemon.process.stderr().slice(-1_500);
  return ended
    ? ` (the daemon ${daemon.process.pid} had exited: code ${exitCode}, signal ${signalCode}; its stderr ends: ${tail})`
    : ` (the daemon ${daemon.process.pid} was still running; its stderr ends: ${tail.slice(-300)})`;
}

function describePlan(plan: TrialPlan): string {
  switch (plan.point) {
    case "turn:event":
    case "gate:received":
    case "gate:committed":
      return `${plan.point} after ${plan.skip} hits`;
    case "after-effect":
      return `after ${plan.lines} effect line(s)`;
    case "random":
      return `after ${plan.delayMs} ms`;
    case "recovery":
      return `after ${plan.delayMs} ms, then at ${plan.recoveryPoint}`;
    default:
      return plan.point;
  }
}

function firstFaults(plan: TrialPlan): DaemonFaults {
  switch (plan.point) {
    case "after-effect":
    case "random":
    case "recovery":
      return {};
    default:
      return { [plan.point]: { action: "kill", skip: plan.skip } };
  }
}

/** Kills the daemon as the plan says; resolves true once it is dead by that kill, false if the turn ended first. */
async function killAsPlanned(
  world: FlootWorld,
  plan: TrialPlan,
  turnId: string,
  effectsFile: string,
): Promise<boolean> {
  const daemon = world.daemon!;
  const exited = daemon.process.exited.then(() => "exited" as const);
  const watching = { active: true };
  const ended = waitForTurnEnd(world, turnId, watching).then(() => "ended" as const);
  try {
    return await killOn(world, plan, daemon, exited, ended, effectsFile);
  } finally {
    watching.active = false;
    ended.catch(() => {});
  }
}

async function killOn(
  world: FlootWorld,
  plan: TrialPlan,
  daemon: NonNullable<FlootWorld["daemon"]>,
  exited: Promise<"exited">,
  ended: Promise<"ended">,
  effectsFile: string,
): Promise<boolean> {
  if (plan.point === "after-effect") {
    const watcher = killOnEffect(effectsFile, plan.lines, daemon.process.pid);
    const outcome = await Promise.race([exited, ended]);
    watcher.stop();
    if (outcome === "exited") world.daemon = undefined;
    return outcome === "exited";
  }
  if (plan.point === "random" || plan.point === "recovery") {
    // A fast machine can finish the turn before the moment comes; the daemon is still there (with its
    // load) to be killed, and a random moment may fall after the turn as well as during it.
    await Promise.race([sleep(plan.delayMs), ended]);
    await world.killDaemon();
    return true;
  }
  const outcome = await Promise.race([exited, ended]);
  if (outcome === "exited") world.daemon = undefined;
  return outcome === "exited";
}

/** SIGKILLs `pid` the instant the file holds `lines` lines (inotify, with polling as a safety net). */
function killOnEffect(file: string, lines: number, pid: number): { stop(): void } {
  let done = false;
  let watcher: ReturnType<typeof watch> | undefined;
  const check = () => {
    if (done) return;
    if (countLines(file) < lines) return;
    done = true;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  const poll = setInterval(() => {
    if (!watcher && existsSync(join(file, ".."))) {
      try {
        watcher = watch(join(file, ".."), check);
      } catch {
        // Created a moment later; polling goes on.
      }
    }
    check();
  }, 5);
  return {
    stop() {
      done = true;
      clearInterval(poll);
      watcher?.close();
    },
  };
}

/**
 * Resolves once the turn has ended, read beside the daemon; never while `watching.active` is false
 * (it then stays pending quietly). Rejects after `timeoutMs`.
 */
async function waitForTurnEnd(
  world: FlootWorld,
  turnId: string,
  watching: { active: boolean },
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (watching.active) {
    const row = world.readTurnRow(turnId);
    if (row && terminalPhases.has(row.phase)) return;
    if (Date.now() > deadline) throw new Error(`turn ${turnId} neither ended nor met its kill point`);
    await sleep(50);
  }
  return new Promise(() => {});
}

async function settle(world: FlootWorld, sessionId: string, timeoutMs: number): Promise<TurnRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const turns = await api(world, () => world.turns(sessionId));
    if (turns.every((turn) => terminalPhases.has(turn.phase)) || Date.now() > deadline) return turns;
    await sleep(250);
  }
}

async function stopGracefully(world: FlootWorld): Promise<void> {
  const daemon = world.daemon;
  if (!daemon) return;
  process.kill(daemon.process.pid, "SIGTERM");
  await daemon.process.exited;
  world.daemon = undefined;
}

/** Starts a daemon that may be killed by a fault before it is ready. */
async function startDaemonOrExit(world: FlootWorld, faults: DaemonFaults): Promise<"ready" | "exited"> {
  const started = world.startDaemon(recoveryOnly, faults).then(
    () => "ready" as const,
    () => "exited" as const,
  );
  return started;
}

interface JournalView {
  problems: string[];
  /** Every event of the session's turns, by turn. */
  events: Map<string, TurnEventEnvelope[]>;
  /** Input previews of the session's admitted, effectful tool calls. */
  admitted: string[];
}

/** The journal of a stopped (or killed) daemon: its consistency, and what it holds of one session. */
function readJournal(world: FlootWorld, sessionId: string): JournalView {
  const journal = openJournal({ path: join(world.stateDir, journalFileName) });
  try {
    const turns = journal.turns.listTurns(sessionId);
    return {
      problems: journal.maintenance.checkConsistency().map((problem) => JSON.stringify(problem)),
      events: new Map(turns.map((turn) => [turn.id, journal.events.readEvents(turn.id, 0, 100_000)])),
      admitted: turns
        .flatMap((turn) => journal.gate.listToolAdmissions(turn.id))
        .filter((admission) => !admission.effectFree)
        .map((admission) => admission.inputPreview),
    };
  } finally {
    journal.maintenance.close();
  }
}

function countEffects(file: string): Record<CallLabel, number> {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const lines = text.split("\n").filter((line) => line !== "");
  return {
    call1: lines.filter((line) => line === "call1").length,
    call2: lines.filter((line) => line === "call2").length,
  };
}

function countLines(file: string): number {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line !== "").length;
  } catch {
    return 0;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A small seeded PRNG, so a seed names a whole plan. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
