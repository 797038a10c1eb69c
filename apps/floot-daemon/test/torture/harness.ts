import { existsSync, mkdirSync, watch } from "node:fs";
import { join } from "node:path";
import type { Backend, TurnEventEnvelope } from "@bridgeworks/protocol";
import { FlootWorld } from "../daemon-harness.js";
import {
  abandonTrial,
  api,
  settle,
  sleep,
  startDaemonOrExit,
  stopGracefully,
  terminalPhases,
  waitForTurnEnd,
} from "./daemon-control.js";
import { countLines, readJournal } from "./journal-view.js";
import { runKeeperTrial } from "./keeper-trial.js";
import { type BackgroundLoad, populateJournal, startLoad } from "./load.js";
import {
  describePlan,
  drawPlan,
  firstFaults,
  type KillPoint,
  keeperKillPoints,
  killPoints,
  mulberry32,
  type TortureMode,
  type TrialPlan,
} from "./points.js";
import { type CallLabel, callLabels, effectsFileName, tortureMarker, tortureScript } from "./script.js";
import { checkAfterKill, checkAfterSettle, checkCliSessionsGone, type Violation } from "./trial-checks.js";
import type { TrialRecord } from "./trial-record.js";

export {
  type KeeperKillPoint,
  type KillPoint,
  keeperKillPoints,
  killPoints,
  type TortureMode,
} from "./points.js";
export type { Violation } from "./trial-checks.js";

/** The recovery mode's environment: CLIs without the keeper, ended with the daemon (as after a reboot). */
const recoveryOnly = { FLOOT_KEEPER: "off" };

export interface TortureOptions {
  backend: Backend;
  /** `recovery` (default): CLIs without the keeper, ended with the daemon; `keeper`: under the keeper. */
  mode?: TortureMode;
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
  /**
   * Caps each plan's delay (the draws stay the same): a small sample that must stop every point while
   * the turn runs keeps its stops early, as a turn may end in under the 2 s a keeper point may wait.
   */
  maxDelayMs?: number;
  /** How long a trial's turns may take to end after the restart. */
  settleTimeoutMs?: number;
  /** Epoch ms: no trial starts after it (the summary then counts the trials that ran). */
  stopStartingAt?: number;
  /** Progress lines (one per trial). */
  progress?: (line: string) => void;
}

export interface TortureSummary {
  backend: Backend;
  mode: TortureMode;
  /** Trials that ran; fewer than `trialsPlanned` when `stopStartingAt` came first. */
  trials: number;
  trialsPlanned: number;
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
  /** Keeper mode only: what the keeper's invariants looked at. */
  keeper?: {
    /** Unfinished turns whose CLI ran under a live keeper at a restart: each must go on to `completed`. */
    aliveAtRestart: number;
    /** Of those, turns interrupted, failed or replayed anyway (each also a violation). */
    needlessInterruptions: number;
    /** Turns whose whole spool (hard-linked as the keeper wrote it) was compared with their journaled events. */
    spoolsChecked: number;
    /** mid-spool kills that caught the spool ahead of `stdout_through`. */
    midSpoolAhead: number;
    /** adoption trials whose restarted daemon died at the adoption point. */
    adoptionKills: number;
  };
  load: {
    overviewPolls: number;
    overviewFailures: number;
    overviewMs: { p50: number; p99: number };
    followsCompleted: number;
  };
  durationMs: number;
}

/** Runs `trials` crash trials against one daemon state dir under background load; never throws a trial's error. */
export async function runTorture(options: TortureOptions): Promise<TortureSummary> {
  const startedAt = Date.now();
  const random = mulberry32(options.seed);
  const mode = options.mode ?? "recovery";
  const points = options.points ?? (mode === "keeper" ? keeperKillPoints : killPoints);
  const world = await FlootWorld.create(options.backend, tortureScript(options.backend));
  const summary: TortureSummary = {
    backend: options.backend,
    mode,
    trials: 0,
    trialsPlanned: options.trials,
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
    ...(mode === "keeper" && {
      keeper: {
        aliveAtRestart: 0,
        needlessInterruptions: 0,
        spoolsChecked: 0,
        midSpoolAhead: 0,
        adoptionKills: 0,
      },
    }),
    load: { overviewPolls: 0, overviewFailures: 0, overviewMs: { p50: 0, p99: 0 }, followsCompleted: 0 },
    durationMs: 0,
  };
  let load: BackgroundLoad | undefined;
  try {
    mkdirSync(world.stateDir, { recursive: true, mode: 0o700 });
    const turnIds = populateJournal(world.stateDir, options.sessions);
    load = startLoad(world.stateDir, {
      pollers: options.pollers,
      followers: options.followers,
      turnIds,
      pauseMs: options.pollPauseMs ?? 2_500,
    });
    for (let trial = 1; trial <= options.trials; trial += 1) {
      if (options.stopStartingAt !== undefined && Date.now() >= options.stopStartingAt) break;
      const drawn = Math.floor(random() * points.length);
      const point = points[options.order === "cycle" ? (trial - 1) % points.length : drawn]!;
      const planned = drawPlan(random, trial, point, options.afterEffectLines);
      const plan =
        options.maxDelayMs === undefined
          ? planned
          : { ...planned, delayMs: Math.min(planned.delayMs, options.maxDelayMs) };
      const settleMs = options.settleTimeoutMs ?? 120_000;
      const record =
        mode === "keeper"
          ? await runKeeperTrial(world, plan, settleMs)
          : await runTrial(world, plan, settleMs);
      summary.trials = trial;
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
      if (summary.keeper && record.keeper) {
        summary.keeper.aliveAtRestart += record.keeper.aliveAtRestart;
        summary.keeper.needlessInterruptions += record.keeper.needless;
        summary.keeper.spoolsChecked += record.keeper.spoolsChecked;
        if (record.keeper.spoolAhead) summary.keeper.midSpoolAhead += 1;
        if (record.keeper.adoptionKilled) summary.keeper.adoptionKills += 1;
      }
      options.progress?.(
        JSON.stringify({
          trial,
          point,
          plan: record.plan,
          fired: record.fired,
          phases: record.phases,
          effects: record.effectLines,
          violations: record.violations.length,
          // What was violated, as it happened: a long run's first finding is read without waiting for its end.
          ...(record.violations.length > 0 && {
            found: record.violations.map(({ invariant, detail }) => `${invariant}: ${detail}`),
          }),
          ms: record.ms,
          steps: record.steps,
          ...(record.keeper && { keeper: record.keeper }),
          ...(record.daemonLogs && { daemonLogs: record.daemonLogs }),
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

    const crashed = readJournal(world.stateDir, session.id);
    checkAfterKill(crashed, seen, violate);

    if (plan.point === "recovery" && fired) {
      const outcome = await startDaemonOrExit(world, recoveryOnly, {
        [plan.recoveryPoint]: { action: "kill" },
      });
      if (outcome === "ready") await stopGracefully(world);
      const again = readJournal(world.stateDir, session.id);
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

    const final = readJournal(world.stateDir, session.id);
    effectLines = checkAfterSettle(session.workspace, crashed, final, turns, violate);
    await checkCliSessionsGone(turns, violate);
    step("final-check");
  } catch (error) {
    await abandonTrial(world, error, violate);
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
