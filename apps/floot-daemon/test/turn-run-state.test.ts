import type { TurnOutcome } from "@bridgeworks/backend-adapters";
import { describe, expect, test } from "vitest";
import {
  isOver,
  nextTurnRunState,
  shutdownGraceMs,
  type TurnRunEffect,
  type TurnRunEvent,
  type TurnRunStateKind,
} from "../src/daemon/turn-run-state.js";

// Issue 35: the coordinator's per-turn state, explicit. Every state × event pair, written out: what the
// run moves to, and what the coordinator does then. A change to the machine changes a row here.

const error = { code: "cli_crashed", message: "boom" };
const completed: TurnOutcome = { phase: "completed" };
const events: Record<TurnRunEvent["type"], TurnRunEvent> = {
  prepared: { type: "prepared" },
  slot_taken: { type: "slot_taken" },
  spawned: { type: "spawned" },
  failed: { type: "failed", error },
  exited: { type: "exited", outcome: completed },
  cancel: { type: "cancel" },
  shutdown: { type: "shutdown" },
  detach: { type: "detach" },
  adopted: { type: "adopted" },
  cli_lost: { type: "cli_lost" },
};

const record = (outcome: TurnOutcome): TurnRunEffect => ({ type: "record", outcome });
const recordFailed = record({ phase: "failed", error });
const recordCancelled = record({ phase: "cancelled" });
const stopCli: TurnRunEffect = { type: "stop_cli" };
const stopCliShutdown: TurnRunEffect = { type: "stop_cli", graceMs: shutdownGraceMs };
const stopWaiting: TurnRunEffect = { type: "stop_waiting" };
const detachCli: TurnRunEffect = { type: "detach_cli" };
const recover: TurnRunEffect = { type: "recover" };

type Row = [TurnRunStateKind, TurnRunEvent["type"], TurnRunStateKind, TurnRunEffect[]];

const table: Row[] = [
  ["preparing", "prepared", "waiting", []],
  ["preparing", "slot_taken", "preparing", []],
  ["preparing", "spawned", "preparing", []],
  ["preparing", "failed", "ended", [recordFailed]],
  ["preparing", "exited", "preparing", []],
  ["preparing", "cancel", "ended", [recordCancelled]],
  ["preparing", "shutdown", "left", []],
  ["preparing", "detach", "left", []],
  ["preparing", "adopted", "running", []],
  ["preparing", "cli_lost", "preparing", []],

  ["waiting", "prepared", "waiting", []],
  ["waiting", "slot_taken", "starting", []],
  ["waiting", "spawned", "waiting", []],
  ["waiting", "failed", "ended", [recordFailed]],
  ["waiting", "exited", "waiting", []],
  ["waiting", "cancel", "ended", [stopWaiting, recordCancelled]],
  ["waiting", "shutdown", "left", [stopWaiting]],
  ["waiting", "detach", "left", [stopWaiting]],
  ["waiting", "adopted", "waiting", []],
  ["waiting", "cli_lost", "waiting", []],

  ["starting", "prepared", "starting", []],
  ["starting", "slot_taken", "starting", []],
  ["starting", "spawned", "running", []],
  ["starting", "failed", "ended", [recordFailed]],
  ["starting", "exited", "ended", [record(completed)]],
  ["starting", "cancel", "ended", [recordCancelled]],
  ["starting", "shutdown", "left", []],
  ["starting", "detach", "left", []],
  ["starting", "adopted", "starting", []],
  ["starting", "cli_lost", "left", [recover]],

  ["running", "prepared", "running", []],
  ["running", "slot_taken", "running", []],
  ["running", "spawned", "running", []],
  ["running", "failed", "ended", [recordFailed]],
  ["running", "exited", "ended", [record(completed)]],
  ["running", "cancel", "cancelling", [stopCli]],
  ["running", "shutdown", "left", [stopCliShutdown]],
  ["running", "detach", "left", [detachCli]],
  ["running", "adopted", "running", []],
  ["running", "cli_lost", "left", [recover]],

  ["cancelling", "prepared", "cancelling", []],
  ["cancelling", "slot_taken", "cancelling", []],
  ["cancelling", "spawned", "cancelling", []],
  ["cancelling", "failed", "ended", [recordCancelled]],
  ["cancelling", "exited", "ended", [recordCancelled]],
  ["cancelling", "cancel", "cancelling", []],
  ["cancelling", "shutdown", "left", [stopCliShutdown]],
  ["cancelling", "detach", "left", [stopCliShutdown]],
  ["cancelling", "adopted", "cancelling", []],
  ["cancelling", "cli_lost", "ended", [recordCancelled]],

  ["ended", "prepared", "ended", []],
  ["ended", "slot_taken", "ended", []],
  ["ended", "spawned", "ended", [stopCli]],
  ["ended", "failed", "ended", []],
  ["ended", "exited", "ended", []],
  ["ended", "cancel", "ended", []],
  ["ended", "shutdown", "ended", []],
  ["ended", "detach", "ended", []],
  ["ended", "adopted", "ended", []],
  ["ended", "cli_lost", "ended", []],

  ["left", "prepared", "left", []],
  ["left", "slot_taken", "left", []],
  ["left", "spawned", "left", [stopCliShutdown]],
  ["left", "failed", "left", []],
  ["left", "exited", "left", []],
  ["left", "cancel", "left", []],
  ["left", "shutdown", "left", []],
  ["left", "detach", "left", []],
  ["left", "adopted", "left", []],
  ["left", "cli_lost", "left", []],
];

describe("a turn's run state", () => {
  test("the table holds every state × event pair once", () => {
    const states: TurnRunStateKind[] = [
      "preparing",
      "waiting",
      "starting",
      "running",
      "cancelling",
      "ended",
      "left",
    ];
    const pairs = table.map(([state, event]) => `${state} ${event}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    expect(pairs.sort()).toEqual(
      states.flatMap((state) => Object.keys(events).map((event) => `${state} ${event}`)).sort(),
    );
  });

  test.each(table)("%s + %s -> %s", (from, event, to, effects) => {
    const next = nextTurnRunState({ kind: from } as never, events[event]);
    expect(next.state.kind).toBe(to);
    expect(next.effects).toEqual(effects);
  });

  test("only ended and left are over; a run records its end at most once", () => {
    expect(
      (["preparing", "waiting", "starting", "running", "cancelling", "ended", "left"] as const).filter(
        (kind) => isOver({ kind }),
      ),
    ).toEqual(["ended", "left"]);
    // Any path from preparing records at most once: walk every sequence of four events.
    const kinds = Object.values(events);
    const walk = (state: { kind: TurnRunStateKind }, depth: number, records: number): void => {
      expect(records).toBeLessThanOrEqual(1);
      if (depth === 0) return;
      for (const event of kinds) {
        const next = nextTurnRunState(state as never, event);
        walk(next.state, depth - 1, records + next.effects.filter((each) => each.type === "record").length);
      }
    };
    walk({ kind: "preparing" }, 5, 0);
  });
});
