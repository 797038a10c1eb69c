import { type TracePoint, tracePoints } from "../../src/daemon/trace.js";
import type { DaemonFaults } from "../daemon-harness.js";

/** Trace points a trial of the recovery mode may SIGKILL the daemon at (the daemon's first start). */
type TurnTracePoint = Exclude<TracePoint, `recovery:${string}` | `adoption:${string}`>;
type RecoveryTracePoint = Extract<TracePoint, `recovery:${string}`>;
/** Where the restarted daemon is killed while it adopts a kept turn (keeper mode's `adoption`). */
export type AdoptionKillPoint = Extract<TracePoint, `adoption:${string}`> | "turn:event";

/**
 * Where a recovery-mode trial kills the daemon (its CLIs run without the keeper, `FLOOT_KEEPER=off`,
 * so they end with it, as after a reboot). Trace points are hit inside the daemon (the fault preload
 * SIGKILLs it there); `after-effect` kills it from outside the instant a tool's line lands in the
 * effects file; `random` after a random delay; `recovery` kills it at a random moment and then kills
 * the restarted daemon again in the middle of its recovery.
 */
export type RecoveryKillPoint = TurnTracePoint | "after-effect" | "random" | "recovery";
export const killPoints: readonly RecoveryKillPoint[] = [
  ...tracePoints.filter(
    (point): point is TurnTracePoint => !point.startsWith("recovery:") && !point.startsWith("adoption:"),
  ),
  "after-effect",
  "random",
  "recovery",
];

/**
 * Where a keeper-mode trial stops the daemon while its turn's CLI runs under the keeper: `sigterm` (a
 * planned stop mid-turn), `mid-spool` (SIGKILL while the daemon is held at one of the turn's events,
 * so the CLI's stdout in the spool runs ahead of the journaled `stdout_through`), `adoption` (a stop,
 * then the restarted daemon SIGKILLed while it adopts the turn) and `keeper` (SIGKILL of the daemon
 * and of the keeper, with or without its CLIs: the turn then goes through recovery).
 */
export type KeeperKillPoint = "sigterm" | "mid-spool" | "adoption" | "keeper";
export const keeperKillPoints: readonly KeeperKillPoint[] = ["sigterm", "mid-spool", "adoption", "keeper"];

export type KillPoint = RecoveryKillPoint | KeeperKillPoint;
export type TortureMode = "recovery" | "keeper";

export interface TrialPlan {
  trial: number;
  point: KillPoint;
  /** Trace-point hits to let pass first (which event, which call). */
  skip: number;
  /** after-effect: kill once this many effect lines landed. */
  lines: number;
  /** random / recovery: ms after the send; keeper points: ms after the turn is `running`. */
  delayMs: number;
  recoveryPoint: RecoveryTracePoint;
  /** adoption: the first stop, and where the restarted daemon is killed. */
  firstStop: "SIGTERM" | "SIGKILL";
  adoptionPoint: AdoptionKillPoint;
  /** keeper: the keeper's CLIs die with it (a reboot) or are left running, orphaned. */
  keeperClis: boolean;
}

/** Draws trial `trial`'s plan at `point` from the seeded `random` (the same draws whatever the point). */
export function drawPlan(
  random: () => number,
  trial: number,
  point: KillPoint,
  afterEffectLines: number | undefined,
): TrialPlan {
  const skip = Math.floor(random() * 12);
  const lines = 1 + Math.floor(random() * 2);
  const delayMs = Math.floor(random() * 4_000);
  const coin = random();
  const adoption = Math.floor(random() * 3);
  return {
    trial,
    point,
    // Mid-stream: any of the first events; at the gate: call1's or call2's; elsewhere the first hit.
    skip: point === "turn:event" || point === "mid-spool" ? skip : point.startsWith("gate:") ? skip % 2 : 0,
    lines: afterEffectLines ?? lines,
    // A keeper point counts from `running`, and the whole turn takes a few seconds.
    delayMs: (keeperKillPoints as readonly string[]).includes(point) ? Math.floor(delayMs / 2) : delayMs,
    recoveryPoint: coin < 0.5 ? "recovery:fenced" : "recovery:applied",
    firstStop: coin < 0.5 ? "SIGTERM" : "SIGKILL",
    adoptionPoint: (["adoption:found", "adoption:attached", "turn:event"] as const)[adoption]!,
    keeperClis: coin < 0.5,
  };
}

export function describePlan(plan: TrialPlan): string {
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
    case "sigterm":
      return `SIGTERM ${plan.delayMs} ms into running`;
    case "mid-spool":
      return `held at turn:event after ${plan.skip} hits, SIGKILL once the spool is ahead`;
    case "adoption":
      return `${plan.firstStop} ${plan.delayMs} ms into running, then SIGKILL at ${plan.adoptionPoint}`;
    case "keeper":
      return `SIGKILL of daemon and keeper ${plan.keeperClis ? "with" : "without"} its CLIs ${plan.delayMs} ms into running`;
    default:
      return plan.point;
  }
}

/** The faults of a trial's first daemon: a kill at its trace point, or for `mid-spool` a long hold. */
export function firstFaults(plan: TrialPlan): DaemonFaults {
  switch (plan.point) {
    case "after-effect":
    case "random":
    case "recovery":
    case "sigterm":
    case "adoption":
    case "keeper":
      return {};
    case "mid-spool":
      return { "turn:event": { action: "hold", ms: 60_000, skip: plan.skip } };
    default:
      return { [plan.point]: { action: "kill", skip: plan.skip } };
  }
}

/** A small seeded PRNG, so a seed names a whole plan. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
