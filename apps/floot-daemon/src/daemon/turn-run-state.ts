import type { TurnOutcome } from "@bridgeworks/backend-adapters";
import type { TurnError } from "@bridgeworks/protocol";

/**
 * Where one turn's run stands in this daemon, from `kick` to its end: what the coordinator acts on,
 * instead of flags checked after every await.
 *
 * - `preparing`: its mount, workspace and sandbox are being made.
 * - `waiting`: it waits for a start slot (still `accepted` in the journal).
 * - `starting`: its CLI is being spawned (`spawning` in the journal).
 * - `running`: its CLI runs.
 * - `cancelling`: a cancel asked its CLI to stop; its end is recorded as cancelled.
 * - `ended`: its end is recorded (or was, by a cancel before its CLI ran).
 * - `left`: the daemon shut down under it: nothing more is recorded (the next start adopts its CLI
 *   from the keeper, or recovers it).
 *
 * A CLI an earlier daemon left to the keeper is `adopted`: from `preparing` straight to `running`. A
 * `detach` (the daemon stops, leaving kept CLIs running) leaves a running turn without stopping it. A
 * `cli_lost` (its keeper went away, so how its CLI ends is unknown) leaves it too, to be recovered as a
 * start would recover it (`recover`).
 */
export type TurnRunState =
  | { kind: "preparing" }
  | { kind: "waiting" }
  | { kind: "starting" }
  | { kind: "running" }
  | { kind: "cancelling" }
  | { kind: "ended" }
  | { kind: "left" };

export type TurnRunStateKind = TurnRunState["kind"];

export type TurnRunEvent =
  | { type: "prepared" }
  | { type: "slot_taken" }
  | { type: "spawned" }
  /** Its preparation or its CLI's start failed. */
  | { type: "failed"; error: TurnError }
  /** Its CLI exited, with the outcome its adapter read. */
  | { type: "exited"; outcome: TurnOutcome }
  | { type: "cancel" }
  /** The daemon stops: every CLI is stopped. */
  | { type: "shutdown" }
  /** The daemon stops, leaving a kept CLI running to its keeper. */
  | { type: "detach" }
  /** Its CLI, kept across a restart, was attached to again. */
  | { type: "adopted" }
  /** Its kept CLI's keeper went away: how the CLI ends is unknown. */
  | { type: "cli_lost" };

export type TurnRunEventType = TurnRunEvent["type"];

/** What the coordinator does on a transition; none waits: the run's own steps do the waiting. */
export type TurnRunEffect =
  /** Journal the turn's end. */
  | { type: "record"; outcome: TurnOutcome }
  /** Ask its CLI to stop (TERM, then KILL after `graceMs`). */
  | { type: "stop_cli"; graceMs?: number }
  /** End its wait for a start slot. */
  | { type: "stop_waiting" }
  /** Stop reading its kept CLI, leaving it running. */
  | { type: "detach_cli" }
  /** Hand the turn to recovery once its run is over: its CLI is fenced and the turn decided on. */
  | { type: "recover" };

export interface TurnRunTransition {
  state: TurnRunState;
  effects: TurnRunEffect[];
}

const cancelled: TurnOutcome = { phase: "cancelled" };
/** How long a CLI is given on shutdown before it is killed. */
export const shutdownGraceMs = 1_000;

/** Whether the run has nothing more to do but release what it holds. */
export function isOver(state: TurnRunState): boolean {
  return state.kind === "ended" || state.kind === "left";
}

/**
 * The one place a turn's run changes state. Pure: the same state and event always give the same
 * next state and effects (the table in test/turn-run-state.test.ts holds every pair).
 */
export function nextTurnRunState(state: TurnRunState, event: TurnRunEvent): TurnRunTransition {
  const to = (kind: TurnRunStateKind, ...effects: TurnRunEffect[]): TurnRunTransition => ({
    state: { kind } as TurnRunState,
    effects,
  });
  const stay: TurnRunTransition = { state, effects: [] };
  switch (state.kind) {
    case "preparing":
      switch (event.type) {
        case "prepared":
          return to("waiting");
        case "failed":
          return to("ended", { type: "record", outcome: { phase: "failed", error: event.error } });
        case "cancel":
          return to("ended", { type: "record", outcome: cancelled });
        case "shutdown":
        case "detach":
          return to("left");
        case "adopted":
          return to("running");
        default:
          return stay;
      }
    case "waiting":
      switch (event.type) {
        case "slot_taken":
          return to("starting");
        case "failed":
          return to("ended", { type: "record", outcome: { phase: "failed", error: event.error } });
        case "cancel":
          return to("ended", { type: "stop_waiting" }, { type: "record", outcome: cancelled });
        case "shutdown":
        case "detach":
          return to("left", { type: "stop_waiting" });
        default:
          return stay;
      }
    case "starting":
      switch (event.type) {
        case "spawned":
          return to("running");
        case "failed":
          return to("ended", { type: "record", outcome: { phase: "failed", error: event.error } });
        // Ended in the journal at once: the late CLI's `running` is refused and it is killed.
        case "cancel":
          return to("ended", { type: "record", outcome: cancelled });
        case "exited":
          return to("ended", { type: "record", outcome: event.outcome });
        case "cli_lost":
          return to("left", { type: "recover" });
        case "shutdown":
        case "detach":
          return to("left");
        default:
          return stay;
      }
    case "running":
      switch (event.type) {
        case "exited":
          return to("ended", { type: "record", outcome: event.outcome });
        case "cli_lost":
          return to("left", { type: "recover" });
        case "failed":
          return to("ended", { type: "record", outcome: { phase: "failed", error: event.error } });
        case "cancel":
          return to("cancelling", { type: "stop_cli" });
        case "shutdown":
          return to("left", { type: "stop_cli", graceMs: shutdownGraceMs });
        case "detach":
          return to("left", { type: "detach_cli" });
        default:
          return stay;
      }
    case "cancelling":
      switch (event.type) {
        case "exited":
        case "failed":
        case "cli_lost":
          return to("ended", { type: "record", outcome: cancelled });
        // A cancel under way is finished before the daemon goes: the next reads how the CLI ended.
        case "shutdown":
        case "detach":
          return to("left", { type: "stop_cli", graceMs: shutdownGraceMs });
        default:
          return stay;
      }
    case "ended":
      // A CLI that still started after its turn ended: stopped at once, nothing more recorded.
      return event.type === "spawned" ? { state, effects: [{ type: "stop_cli" }] } : stay;
    case "left":
      return event.type === "spawned"
        ? { state, effects: [{ type: "stop_cli", graceMs: shutdownGraceMs }] }
        : stay;
  }
}
