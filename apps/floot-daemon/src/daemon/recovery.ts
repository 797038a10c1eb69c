import { type FenceOutcome, fenceCli, findProcessesBySpawnMarker } from "@bridgeworks/backend-adapters";
import type { CliProcess, FlootStartTurns } from "@bridgeworks/protocol";
import type { Logger } from "@bridgeworks/runtime";
import {
  applyRecovery,
  defaultRecoveryPolicy,
  type JournalGate,
  type JournalMaintenance,
  planRecovery,
  type RecoveryDecision,
  type RecoveryJournal,
  type RecoveryOutcome,
  type RecoveryPolicy,
} from "@bridgeworks/turn-journal";
import { noTrace, type Trace } from "./trace.js";

export interface FencedProcess {
  turnId: string;
  pid: number;
  /** `process`: the identity journaled with `running`; `spawn_marker`: found by the turn's marker. */
  foundBy: "process" | "spawn_marker";
  outcome: FenceOutcome;
}

export interface RecoveryReport {
  outcomes: RecoveryOutcome[];
  fenced: FencedProcess[];
}

/** What start-up recovery uses of the journal: the turns it decides on, their admissions, and deferred commits. */
export interface TurnRecoveryJournal extends RecoveryJournal {
  gate: Pick<JournalGate, "listToolAdmissions">;
  maintenance: Pick<JournalMaintenance, "deferDurability">;
}

export interface RecoveryDeps {
  fence?: (process: CliProcess) => Promise<FenceOutcome>;
  findProcessesBySpawnMarker?: (markers: readonly string[]) => Map<string, CliProcess[]>;
  trace?: Trace;
  /** Turns whose CLI the keeper kept (turn-adoption.ts): they go on, neither fenced nor decided on. */
  kept?: ReadonlySet<string>;
  /** A turn with effects whose CLI is gone: continued when provably safe, or interrupted (settings). */
  withEffects?: RecoveryPolicy["withEffects"];
  /** Only these turns (one whose keeper went away while the daemon runs); default every unfinished one. */
  only?: ReadonlySet<string>;
}

/**
 * What a start does before anything else runs: end every CLI an earlier daemon left running, by the
 * pid and start time it journaled (a reused pid is left alone) and by the spawn marker it journaled
 * before spawning (which also finds a CLI whose pid it died before journaling, and children that left
 * the CLI's process group); then replay the turns that produced no effect (once) and mark every other
 * unfinished turn `interrupted`, one turn per transaction, so a crash in between leaves the rest for
 * the next start. A tool call the gate admitted is an effect: its turn is never replayed. Backend
 * transcripts are never touched. Those commits do not fsync one by one (a hundred fsyncs were most of
 * a restart with a hundred unfinished turns): the caller's next FULL commit, the daemon's generation
 * bump before any turn runs, makes them durable; a power loss before it only makes the next start
 * recover the same turns again.
 */
export async function recoverTurns(
  journal: TurnRecoveryJournal,
  logger: Logger,
  deps: RecoveryDeps = {},
): Promise<RecoveryReport> {
  const fence = deps.fence ?? ((process) => fenceCli(process));
  const findByMarker = deps.findProcessesBySpawnMarker ?? findProcessesBySpawnMarker;
  const kept = deps.kept ?? new Set<string>();
  const unfinished = journal.turns
    .listNonTerminalTurns()
    .filter((turn) => !kept.has(turn.id) && (deps.only === undefined || deps.only.has(turn.id)));
  const fenced: FencedProcess[] = [];
  const fenceOne = async (turnId: string, process: CliProcess, foundBy: FencedProcess["foundBy"]) => {
    const outcome = await fence(process);
    fenced.push({ turnId, pid: process.pid, foundBy, outcome });
    logger.info("fenced a leftover CLI", { turn: turnId, pid: process.pid, foundBy, outcome });
  };
  for (const turn of unfinished) {
    if (turn.process) await fenceOne(turn.id, turn.process, "process");
  }
  // After the recorded CLIs and their groups: what still carries a marker was never recorded or left
  // its CLI's group.
  // Again until none is left (at most three rounds): a CLI ended meanwhile may have started a process
  // after its group was signalled (Claude Code's sandbox starts `npm root -g`: measured, 2.1.332).
  const markers = unfinished.flatMap((turn) => turn.spawnMarker ?? []);
  for (let round = 0; round < 3 && markers.length > 0; round++) {
    const marked = findByMarker(markers);
    let found = 0;
    for (const turn of unfinished) {
      if (turn.spawnMarker === undefined) continue;
      for (const process of marked.get(turn.spawnMarker) ?? []) {
        found += 1;
        await fenceOne(turn.id, process, "spawn_marker");
      }
    }
    if (found === 0) break;
  }
  const trace = deps.trace ?? noTrace;
  trace("recovery:fenced", { turns: unfinished.length, fenced: fenced.length });
  const policy = { ...defaultRecoveryPolicy, withEffects: deps.withEffects ?? "interrupt" };
  const callsOf = (turnId: string) => journal.gate.listToolAdmissions(turnId);
  const outcomes = journal.maintenance.deferDurability(() =>
    applyPlan(journal, planRecovery(unfinished, policy, callsOf), logger, trace),
  );
  return { outcomes, fenced };
}

function applyPlan(
  journal: TurnRecoveryJournal,
  plan: readonly RecoveryDecision[],
  logger: Logger,
  trace: Trace,
): RecoveryOutcome[] {
  const outcomes: RecoveryOutcome[] = [];
  for (const planned of plan) {
    const [outcome] = applyRecovery(journal, [planned]);
    if (outcome === undefined) continue;
    outcomes.push(outcome);
    const { decision, turn } = outcome;
    if (decision.action === "keep") continue;
    trace("recovery:applied", { turnId: decision.turn.id, action: decision.action });
    const admitted = journal.gate
      .listToolAdmissions(decision.turn.id)
      .filter((admission) => !admission.effectFree);
    logger.info("recovered a turn", {
      turn: decision.turn.id,
      action: decision.action,
      reason: decision.reason,
      admittedToolCalls: admitted.map((admission) => admission.toolCallId).join(","),
      ...(decision.action === "replay" && { replay: turn.id }),
      ...(decision.action === "continue" && { continuation: turn.id }),
      ...(decision.action === "ask" && {
        mayHaveRun: decision.calls.map((call) => call.toolCallId).join(","),
      }),
    });
  }
  return outcomes;
}

/** What a start found of the unfinished turns, as `GET /v1/status` tells a page after a restart. */
export function turnsAtStart(keptRunning: number, report: RecoveryReport): FlootStartTurns {
  const count = (action: RecoveryDecision["action"]) =>
    report.outcomes.filter((outcome) => outcome.decision.action === action).length;
  return {
    keptRunning,
    replayed: count("replay"),
    continued: count("continue"),
    waitingOnYou: count("ask"),
    interrupted: count("interrupt"),
  };
}
