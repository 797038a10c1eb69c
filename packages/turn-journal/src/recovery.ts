import {
  isTerminalTurnPhase,
  mayHaveRunErrorCode,
  type SecretRequest,
  type ToolAdmission,
  type TurnError,
  type TurnRecord,
} from "@bridgeworks/protocol";
import { cliLostNote, describeCall } from "./cli-lost-notes.js";
import type { JournalGate } from "./gate.js";
import type { JournalSecrets } from "./secrets.js";
import type { JournalTurns } from "./turns.js";

/** What recovery reads and changes: the turns, and the secret requests an interrupted turn orphaned. */
export interface RecoveryJournal {
  turns: Pick<
    JournalTurns,
    "getTurn" | "replayTurn" | "continueTurn" | "transition" | "listNonTerminalTurns"
  >;
  secrets: Pick<JournalSecrets, "listSecretRequests">;
  gate: Pick<JournalGate, "listToolAdmissions">;
}

export interface RecoveryPolicy {
  /** A turn without effects is replayed automatically while its attempt is below this. */
  maxAttempts: number;
  /**
   * A turn with effects: `interrupt` it (a person retries), or `continue` it on its conversation when
   * every tool call it started has a recorded end, and else make it wait on a person's decision.
   */
  withEffects: "interrupt" | "continue";
  /** A turn is continued by itself while its attempt is below this, so a crash loop ends. */
  maxContinuedAttempts: number;
}

export const defaultRecoveryPolicy: RecoveryPolicy = {
  maxAttempts: 2,
  withEffects: "interrupt",
  maxContinuedAttempts: 4,
};

export type RecoveryDecision =
  | { action: "replay"; turn: TurnRecord; reason: "no_effects" }
  | { action: "continue"; turn: TurnRecord; reason: "calls_finished" }
  | { action: "ask"; turn: TurnRecord; reason: "may_have_run"; calls: ToolAdmission[] }
  | { action: "interrupt"; turn: TurnRecord; reason: "has_effects" | "attempts_exhausted" }
  | { action: "keep"; turn: TurnRecord; reason: "queued" | "not_started" };

export interface RecoveryOutcome {
  decision: RecoveryDecision;
  /** The replay for a replayed turn, else the turn as it is now. */
  turn: TurnRecord;
  /** Requests of an interrupted turn that still wait for an answer (the UI shows them again). */
  orphanedSecretRequests: SecretRequest[];
}

/**
 * Decides, without touching anything, what becomes of each unfinished turn after a restart. Fence the
 * CLI processes of the replayed and interrupted turns (by pid and start time, and by spawn marker)
 * before applying the plan.
 *  - queued: stays queued; accepted: never spawned anything, runs as it is;
 *  - an effect (assistant text, a tool or secret request begun): interrupted, retried only explicitly;
 *    or, with `withEffects: "continue"`, continued on its conversation when every effectful tool call
 *    it was admitted has a recorded end (`callsOf`), else interrupted to wait on a person (`ask`);
 *  - no effect and attempt < maxAttempts: replayed once more; else interrupted, so a crash loop ends.
 */
export function planRecovery(
  turns: readonly TurnRecord[],
  policy: RecoveryPolicy = defaultRecoveryPolicy,
  callsOf: (turnId: string) => readonly ToolAdmission[] = () => [],
): RecoveryDecision[] {
  return turns
    .filter((turn) => !isTerminalTurnPhase(turn.phase))
    .map((turn): RecoveryDecision => {
      if (turn.phase === "queued") return { action: "keep", turn, reason: "queued" };
      if (turn.phase === "accepted") return { action: "keep", turn, reason: "not_started" };
      if (turn.effects.length > 0 && policy.withEffects === "continue") {
        const calls = unfinishedCalls(callsOf(turn.id));
        if (calls.length > 0) return { action: "ask", turn, reason: "may_have_run", calls };
        if (turn.attempt >= policy.maxContinuedAttempts)
          return { action: "interrupt", turn, reason: "attempts_exhausted" };
        return { action: "continue", turn, reason: "calls_finished" };
      }
      if (turn.effects.length > 0) return { action: "interrupt", turn, reason: "has_effects" };
      if (turn.attempt >= policy.maxAttempts)
        return { action: "interrupt", turn, reason: "attempts_exhausted" };
      return { action: "replay", turn, reason: "no_effects" };
    });
}

const restartErrors: Record<
  Exclude<RecoveryDecision["reason"], "queued" | "not_started" | "may_have_run">,
  TurnError
> = {
  no_effects: {
    code: "daemon_restarted",
    message: "the daemon restarted before this turn produced an effect; it was replayed",
  },
  has_effects: {
    code: "daemon_restarted",
    message: "the daemon restarted after this turn produced effects; retry it explicitly",
  },
  attempts_exhausted: {
    code: "replay_limit",
    message: "the daemon restarted again during a replayed turn; retry it explicitly",
  },
  calls_finished: {
    code: "daemon_restarted",
    message: "its CLI was gone after every tool call it started had finished; it carried on by itself",
  },
};

/** The effectful calls with no recorded end: each may have run halfway. */
export function unfinishedCalls(calls: readonly ToolAdmission[]): ToolAdmission[] {
  return calls.filter((call) => !call.effectFree && call.completedAt === undefined);
}

/** The error of a turn waiting on a person: which calls may have run, and the choices. */
export function mayHaveRunError(
  calls: readonly Pick<ToolAdmission, "toolName" | "inputPreview">[],
): TurnError {
  return {
    code: mayHaveRunErrorCode,
    message:
      `its CLI was gone while ${calls.length === 1 ? "this tool call" : "these tool calls"} may have ` +
      `run halfway: ${calls.map(describeCall).join("; ")}. Run it again, skip it, or stop.`,
  };
}

/** Applies a plan, each turn in its own transaction; applying it again changes nothing more. */
export function applyRecovery(
  journal: RecoveryJournal,
  decisions: readonly RecoveryDecision[],
): RecoveryOutcome[] {
  return decisions.map((decision) => {
    const turnId = decision.turn.id;
    const current = journal.turns.getTurn(turnId);
    if (decision.action === "keep" || !current) {
      return { decision, turn: current ?? decision.turn, orphanedSecretRequests: [] };
    }
    if (decision.action === "replay") {
      return {
        decision,
        turn: journal.turns.replayTurn(turnId, restartErrors[decision.reason]),
        orphanedSecretRequests: [],
      };
    }
    if (decision.action === "continue") {
      const note = cliLostNote({ kind: "continue" });
      return {
        decision,
        turn: journal.turns.continueTurn(turnId, restartErrors[decision.reason], note),
        orphanedSecretRequests: [],
      };
    }
    const error =
      decision.action === "ask" ? mayHaveRunError(decision.calls) : restartErrors[decision.reason];
    const turn = isTerminalTurnPhase(current.phase)
      ? current
      : journal.turns.transition(turnId, { phase: "interrupted", error });
    const orphanedSecretRequests = journal.secrets
      .listSecretRequests(turnId)
      .filter((request) => request.status === "orphaned");
    return { decision, turn, orphanedSecretRequests };
  });
}

/** `planRecovery` over every unfinished turn, then `applyRecovery`: for callers with nothing to fence. */
export function recoverJournal(
  journal: RecoveryJournal,
  policy: RecoveryPolicy = defaultRecoveryPolicy,
): RecoveryOutcome[] {
  const callsOf = (turnId: string) => journal.gate.listToolAdmissions(turnId);
  return applyRecovery(journal, planRecovery(journal.turns.listNonTerminalTurns(), policy, callsOf));
}
