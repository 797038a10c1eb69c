import { type FenceOutcome, fenceProcess } from "@bridgeworks/backend-adapters";
import type { CliProcess } from "@bridgeworks/protocol";
import {
  applyRecovery,
  planRecovery,
  type RecoveryOutcome,
  type TurnJournal,
} from "@bridgeworks/turn-journal";
import type { Logger } from "../log.js";

export interface RecoveryReport {
  outcomes: RecoveryOutcome[];
  fenced: { turnId: string; pid: number; outcome: FenceOutcome }[];
}

export type Fence = (process: CliProcess) => Promise<FenceOutcome>;

/**
 * What a start does before anything else runs: end every CLI an earlier daemon left running (by pid
 * and start time, so a reused pid is left alone), then replay the turns that produced no effect (once)
 * and mark every other unfinished turn `interrupted`. Backend transcripts are never touched.
 */
export async function recoverTurns(
  journal: TurnJournal,
  logger: Logger,
  fence: Fence = (process) => fenceProcess(process),
): Promise<RecoveryReport> {
  const unfinished = journal.listNonTerminalTurns();
  const fenced: RecoveryReport["fenced"] = [];
  for (const turn of unfinished) {
    if (!turn.process) continue;
    const outcome = await fence(turn.process);
    fenced.push({ turnId: turn.id, pid: turn.process.pid, outcome });
    logger.log("info", "fenced a leftover CLI", { turn: turn.id, pid: turn.process.pid, outcome });
  }
  const outcomes = applyRecovery(journal, planRecovery(unfinished));
  for (const { decision, turn } of outcomes) {
    if (decision.action === "keep") continue;
    logger.log("info", "recovered a turn", {
      turn: decision.turn.id,
      action: decision.action,
      reason: decision.reason,
      ...(decision.action === "replay" && { replay: turn.id }),
    });
  }
  return { outcomes, fenced };
}
