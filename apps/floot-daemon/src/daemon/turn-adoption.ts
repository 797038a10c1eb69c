import type { KeeperClient } from "@bridgeworks/backend-adapters";
import type { CliProcess, TurnRecord } from "@bridgeworks/protocol";
import type { Logger } from "@bridgeworks/runtime";
import type { JournalTurns } from "@bridgeworks/turn-journal";

/** A turn whose CLI the keeper kept across the restart: attached to again, read on from `through`. */
export interface KeptTurn {
  turn: TurnRecord;
  process: CliProcess;
  through: number;
}

/** The phases of a turn whose CLI runs: only such a turn's CLI is adopted. */
const adoptablePhases: ReadonlySet<TurnRecord["phase"]> = new Set(["running", "awaiting_secret"]);

/**
 * At start, before recovery decides anything: the unfinished turns whose CLI the keeper still keeps
 * under the pid and start time the journal recorded (the keeper proved the state dir's key, so it is
 * this state dir's). What the keeper keeps for no such turn (its turn ended, or never recorded its
 * `running`) is released: killed if it still runs, its spool removed; recovery then fences and decides
 * on those turns as before.
 */
export async function adoptableTurns(
  keeper: KeeperClient | undefined,
  turns: Pick<JournalTurns, "listNonTerminalTurns">,
  logger: Logger,
): Promise<KeptTurn[]> {
  if (keeper === undefined) return [];
  const kept = new Map((await keeper.list()).map((cli) => [cli.id, cli]));
  const adopted: KeptTurn[] = [];
  for (const turn of turns.listNonTerminalTurns()) {
    const cli = kept.get(turn.id);
    if (cli === undefined) continue;
    const same = turn.process?.pid === cli.pid && turn.process.startTime === cli.startTime;
    if (!same || !adoptablePhases.has(turn.phase)) continue;
    kept.delete(turn.id);
    adopted.push({ turn, process: turn.process!, through: turn.stdoutThrough ?? 0 });
  }
  for (const cli of kept.values()) {
    logger.info("released a kept CLI no unfinished turn runs", { turn: cli.id, pid: cli.pid });
    keeper.release(cli.id);
  }
  return adopted;
}
