import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TurnEventEnvelope, TurnRecord } from "@bridgeworks/protocol";
import { openJournal } from "@bridgeworks/turn-journal";
import { journalFileName } from "../../src/state-dir.js";
import type { CallLabel } from "./script.js";

export interface JournalView {
  problems: string[];
  /** The session's turns as journaled. */
  turns: TurnRecord[];
  /** Every event of the session's turns, by turn. */
  events: Map<string, TurnEventEnvelope[]>;
  /** Input previews of the session's admitted, effectful tool calls. */
  admitted: string[];
}

/** The journal of a stopped (or killed) daemon: its consistency, and what it holds of one session. */
export function readJournal(stateDir: string, sessionId: string): JournalView {
  const journal = openJournal({ path: join(stateDir, journalFileName) });
  try {
    const turns = journal.turns.listTurns(sessionId);
    return {
      problems: journal.maintenance.checkConsistency().map((problem) => JSON.stringify(problem)),
      turns,
      events: new Map(turns.map((turn) => [turn.id, journal.events.readEvents(turn.id, 0, 100_000)])),
      admitted: turns
        .flatMap((turn) => journal.gate.listToolAdmissions(turn.id))
        .filter((admission) => !admission.effectFree)
        .map((admission) => admission.inputPreview),
    };
  } finally {
    journal.maintenance.close();
  }
}

export function countEffects(file: string): Record<CallLabel, number> {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const lines = text.split("\n").filter((line) => line !== "");
  return {
    call1: lines.filter((line) => line === "call1").length,
    call2: lines.filter((line) => line === "call2").length,
  };
}

export function countLines(file: string): number {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line !== "").length;
  } catch {
    return 0;
  }
}
