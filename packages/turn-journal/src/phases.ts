import type { TurnPhase, TurnTransition } from "@bridgeworks/protocol";
import { JournalError } from "./errors.js";

/** Phase changes a turn's owner may ask for with `transition()`. */
const transitionsByOwner: Readonly<Record<TurnPhase, readonly TurnTransition["phase"][]>> = {
  queued: ["cancelled"],
  accepted: ["spawning", "failed", "cancelled", "interrupted"],
  spawning: ["running", "failed", "cancelled", "interrupted"],
  running: ["completed", "failed", "cancelled", "interrupted"],
  // Back to running only when its last pending secret request is resolved.
  awaiting_secret: ["completed", "failed", "cancelled", "interrupted"],
  completed: [],
  failed: [],
  cancelled: [],
  interrupted: [],
};

export function assertOwnerTransition(turnId: string, from: TurnPhase, to: TurnTransition["phase"]): void {
  if (transitionsByOwner[from].includes(to)) return;
  const allowed = transitionsByOwner[from];
  const hint = allowed.length === 0 ? "it has ended" : `it can move to ${allowed.join(", ")}`;
  throw new JournalError("invalid_transition", `turn ${turnId} is ${from}; cannot move to ${to} (${hint})`);
}

/** Only a live CLI produces events. */
export const eventAcceptingPhases: readonly TurnPhase[] = ["spawning", "running", "awaiting_secret"];

export function acceptsEvents(phase: TurnPhase): boolean {
  return eventAcceptingPhases.includes(phase);
}
