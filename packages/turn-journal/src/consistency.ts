import type { TurnEvent, TurnPhase } from "@bridgeworks/protocol";
import type { Database } from "better-sqlite3";
import { effectBitsByEventType } from "./effects.js";

export type ConsistencyProblemKind =
  | "integrity"
  | "event_indexes"
  | "phase_mismatch"
  | "effects_mismatch"
  | "secret_mismatch"
  | "gate_mismatch"
  | "active_turns";

export interface ConsistencyProblem {
  kind: ConsistencyProblemKind;
  turnId?: string;
  detail: string;
}

interface TurnStats {
  id: string;
  session_id: string;
  phase: TurnPhase;
  effects: number;
  event_count: number;
  first_index: number | null;
  last_index: number | null;
  last_phase_payload: string | null;
  pending_secrets: number;
}

/**
 * The invariants the journal keeps, checked from the stored bytes alone: SQLite integrity; every turn's
 * events indexed 0..n-1; its phase equal to its last phase or terminal event; its effects equal to what
 * its events prove (an `effectFree` tool proves none); `awaiting_secret` exactly when it has a pending
 * secret request; each gate record beside its own `tool.admitted` event and each such event with its
 * record; one active turn per session.
 */
export function findConsistencyProblems(db: Database): ConsistencyProblem[] {
  const problems: ConsistencyProblem[] = [];
  const integrity = db.pragma("integrity_check", { simple: false }) as { integrity_check: string }[];
  const integrityMessages = integrity.map((row) => row.integrity_check).filter((message) => message !== "ok");
  for (const detail of integrityMessages) problems.push({ kind: "integrity", detail });

  const effectTypes = effectBitsByEventType();
  const effectsByTurn = new Map<string, number>();
  const placeholders = [...effectTypes.keys()].map(() => "?").join(", ");
  const effectRows = db
    .prepare(
      `SELECT DISTINCT turn_id, type FROM turn_events WHERE type IN (${placeholders})
         AND json_extract(payload, '$.effectFree') IS NOT 1`,
    )
    .all(...effectTypes.keys()) as { turn_id: string; type: string }[];
  for (const row of effectRows) {
    const bits = effectTypes.get(row.type as TurnEvent["type"]) ?? 0;
    effectsByTurn.set(row.turn_id, (effectsByTurn.get(row.turn_id) ?? 0) | bits);
  }

  const turns = db
    .prepare(
      `SELECT t.id, t.session_id, t.phase, t.effects,
         count(e.idx) AS event_count, min(e.idx) AS first_index, max(e.idx) AS last_index,
         (SELECT p.payload FROM turn_events p WHERE p.turn_id = t.id AND p.type IN ('phase', 'terminal')
            ORDER BY p.idx DESC LIMIT 1) AS last_phase_payload,
         (SELECT count(*) FROM secret_requests r WHERE r.turn_id = t.id AND r.status = 'pending') AS pending_secrets
       FROM turns t LEFT JOIN turn_events e ON e.turn_id = t.id
       GROUP BY t.id`,
    )
    .all() as TurnStats[];

  const activeBySession = new Map<string, string[]>();
  for (const turn of turns) {
    problems.push(...checkTurn(turn, effectsByTurn.get(turn.id) ?? 0));
    if (["accepted", "spawning", "running", "awaiting_secret"].includes(turn.phase)) {
      activeBySession.set(turn.session_id, [...(activeBySession.get(turn.session_id) ?? []), turn.id]);
    }
  }
  problems.push(...findGateProblems(db));
  for (const [sessionId, active] of activeBySession) {
    if (active.length > 1) {
      problems.push({
        kind: "active_turns",
        detail: `session ${sessionId} has active turns ${active.join(", ")}`,
      });
    }
  }
  return problems;
}

function checkTurn(turn: TurnStats, provenEffects: number): ConsistencyProblem[] {
  const problems: ConsistencyProblem[] = [];
  const turnId = turn.id;
  if (turn.event_count === 0 || turn.first_index !== 0 || turn.last_index !== turn.event_count - 1) {
    problems.push({
      kind: "event_indexes",
      turnId,
      detail: `turn ${turnId} has ${turn.event_count} events indexed ${turn.first_index}..${turn.last_index}`,
    });
  }
  const phaseOfEvents = lastRecordedPhase(turn.last_phase_payload);
  if (phaseOfEvents !== turn.phase) {
    problems.push({
      kind: "phase_mismatch",
      turnId,
      detail: `turn ${turnId} is ${turn.phase} but its last phase event says ${phaseOfEvents ?? "nothing"}`,
    });
  }
  if (provenEffects !== turn.effects) {
    problems.push({
      kind: "effects_mismatch",
      turnId,
      detail: `turn ${turnId} records effects ${turn.effects} but its events prove ${provenEffects}`,
    });
  }
  if ((turn.phase === "awaiting_secret") !== turn.pending_secrets > 0) {
    problems.push({
      kind: "secret_mismatch",
      turnId,
      detail: `turn ${turnId} is ${turn.phase} with ${turn.pending_secrets} pending secret requests`,
    });
  }
  return problems;
}

/** Every gate row names its own `tool.admitted` event, and every such event has its row. */
function findGateProblems(db: Database): ConsistencyProblem[] {
  const rows = db
    .prepare(
      `SELECT e.turn_id, e.idx, json_extract(e.payload, '$.toolId') AS tool_id, g.tool_call_id, g.event_idx,
         json_extract(e.payload, '$.effectFree') IS 1 AS event_effect_free, g.effect_free
       FROM turn_events e LEFT JOIN tool_gates g
         ON g.turn_id = e.turn_id AND g.tool_call_id = json_extract(e.payload, '$.toolId')
       WHERE e.type = 'tool.admitted'
       UNION ALL
       SELECT g.turn_id, NULL, NULL, g.tool_call_id, g.event_idx, NULL, g.effect_free
       FROM tool_gates g LEFT JOIN turn_events e ON e.turn_id = g.turn_id AND e.idx = g.event_idx
       WHERE e.type IS NOT 'tool.admitted'`,
    )
    .all() as {
    turn_id: string;
    idx: number | null;
    tool_id: string | null;
    tool_call_id: string | null;
    event_idx: number | null;
    event_effect_free: number | null;
    effect_free: number | null;
  }[];
  const problems: ConsistencyProblem[] = [];
  for (const row of rows) {
    const matches =
      row.idx !== null &&
      row.tool_call_id !== null &&
      row.event_idx === row.idx &&
      row.event_effect_free === row.effect_free;
    if (matches) continue;
    problems.push({
      kind: "gate_mismatch",
      turnId: row.turn_id,
      detail:
        row.idx === null
          ? `turn ${row.turn_id} has a gate record for ${row.tool_call_id} without its tool.admitted event`
          : `turn ${row.turn_id} event ${row.idx} admits ${row.tool_id} but its gate record does not match it`,
    });
  }
  return problems;
}

function lastRecordedPhase(payload: string | null): TurnPhase | undefined {
  if (payload === null) return undefined;
  const event = JSON.parse(payload) as TurnEvent;
  if (event.type === "phase") return event.phase;
  if (event.type === "terminal") return event.outcome;
  return undefined;
}
