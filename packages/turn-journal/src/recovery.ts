import {
  isTerminalTurnPhase,
  type SecretRequest,
  type TurnError,
  type TurnRecord,
} from "@bridgeworks/protocol";
import type { JournalSecrets } from "./secrets.js";
import type { JournalTurns } from "./turns.js";

/** What recovery reads and changes: the turns, and the secret requests an interrupted turn orphaned. */
export interface RecoveryJournal {
  turns: Pick<JournalTurns, "getTurn" | "replayTurn" | "transition" | "listNonTerminalTurns">;
  secrets: Pick<JournalSecrets, "listSecretRequests">;
}

export interface RecoveryPolicy {
  /** A turn without effects is replayed automatically while its attempt is below this. */
  maxAttempts: number;
}

export const defaultRecoveryPolicy: RecoveryPolicy = { maxAttempts: 2 };

export type RecoveryDecision =
  | { action: "replay"; turn: TurnRecord; reason: "no_effects" }
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
 *  - no effect and attempt < maxAttempts: replayed once more; else interrupted, so a crash loop ends.
 */
export function planRecovery(
  turns: readonly TurnRecord[],
  policy: RecoveryPolicy = defaultRecoveryPolicy,
): RecoveryDecision[] {
  return turns
    .filter((turn) => !isTerminalTurnPhase(turn.phase))
    .map((turn): RecoveryDecision => {
      if (turn.phase === "queued") return { action: "keep", turn, reason: "queued" };
      if (turn.phase === "accepted") return { action: "keep", turn, reason: "not_started" };
      if (turn.effects.length > 0) return { action: "interrupt", turn, reason: "has_effects" };
      if (turn.attempt >= policy.maxAttempts)
        return { action: "interrupt", turn, reason: "attempts_exhausted" };
      return { action: "replay", turn, reason: "no_effects" };
    });
}

const restartErrors: Record<Exclude<RecoveryDecision["reason"], "queued" | "not_started">, TurnError> = {
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
};

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
    const turn = isTerminalTurnPhase(current.phase)
      ? current
      : journal.turns.transition(turnId, { phase: "interrupted", error: restartErrors[decision.reason] });
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
  return applyRecovery(journal, planRecovery(journal.turns.listNonTerminalTurns(), policy));
}
