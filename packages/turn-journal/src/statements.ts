import type { CliLostDecision } from "@bridgeworks/protocol";
import type { Database } from "better-sqlite3";
import type {
  EventRow,
  SecretRequestRow,
  SessionRow,
  ToolAdmissionRow,
  ToolGateRow,
  TurnRow,
} from "./rows.js";

const activePhases = "('accepted', 'spawning', 'running', 'awaiting_secret')";
const terminalPhases = "('completed', 'failed', 'cancelled', 'interrupted')";

export const sessionColumns = `
  s.id, s.backend, s.conversation_id, s.created_at, s.stopped_at, s.title,
  a.id AS active_turn_id, a.phase AS active_phase,
  (SELECT count(*) FROM turns q WHERE q.session_id = s.id AND q.phase = 'queued') AS queued_turns
  FROM sessions s LEFT JOIN turns a ON a.session_id = s.id AND a.phase IN ${activePhases}`;

const turnColumns = `
  t.*, s.backend,
  (SELECT coalesce(max(e.idx) + 1, 0) FROM turn_events e WHERE e.turn_id = t.id) AS event_count
  FROM turns t JOIN sessions s ON s.id = t.session_id`;

/**
 * Recovery's input. `+t.session_id` keeps SQLite from walking the (session_id, seq) index through every
 * turn to save a sort: it reads the `turns_unfinished` partial index, whose size is the unfinished turns.
 */
export const unfinishedTurnsSql = `SELECT ${turnColumns} WHERE t.phase NOT IN ${terminalPhases}
  ORDER BY +t.session_id, t.seq`;

export interface TurnInsert {
  id: string;
  sessionId: string;
  seq: number;
  input: string;
  phase: "queued" | "accepted";
  attempt: number;
  replayOf: string | null;
  retryOf: string | null;
  continues: string | null;
  generation: number;
  now: number;
}

export interface TurnUpdate {
  id: string;
  phase: string;
  effects: number;
  conversationId: string | null;
  spawnMarker: string | null;
  pid: number | null;
  startTime: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  generation: number | null;
  now: number;
  endedAt: number | null;
}

/** What a batch of stream events needs of its turn: no join, no event count. */
export type TurnState = Pick<TurnRow, "id" | "session_id" | "phase" | "effects">;

export type TurnStreamUpdate = Pick<TurnUpdate, "id" | "effects" | "conversationId" | "now"> & {
  stdoutThrough: number | null;
};

/** The part of a prepared statement the journal uses, with its bind parameters and row type. */
export interface Query<Parameters extends unknown[], Row = unknown> {
  run(...parameters: Parameters): { changes: number };
  get(...parameters: Parameters): Row | undefined;
  all(...parameters: Parameters): Row[];
}

/** Every statement the journal runs, prepared once per connection. */
export function prepareStatements(db: Database) {
  function query<Parameters extends unknown[], Row = unknown>(sql: string): Query<Parameters, Row> {
    return db.prepare<Parameters, Row>(sql);
  }
  function value<Parameters extends unknown[], Value>(sql: string): Query<Parameters, Value> {
    return db.prepare<Parameters, Value>(sql).pluck();
  }
  return {
    generation: value<[], number>("SELECT value FROM journal_meta WHERE key = 'bridge_generation'"),
    bumpGeneration: query<[]>("UPDATE journal_meta SET value = value + 1 WHERE key = 'bridge_generation'"),

    insertSession: query<[string, string, number]>(
      "INSERT INTO sessions (id, backend, created_at) VALUES (?, ?, ?)",
    ),
    session: query<[string], SessionRow>(`SELECT ${sessionColumns} WHERE s.id = ?`),
    sessions: query<[], SessionRow>(`SELECT ${sessionColumns} ORDER BY s.created_at, s.id`),
    stopSession: query<[number, string]>("UPDATE sessions SET stopped_at = ? WHERE id = ?"),
    renameSession: query<[string, string]>("UPDATE sessions SET title = ? WHERE id = ?"),
    setSessionTitle: query<[string, string]>("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL"),
    setSessionConversation: query<[string, string]>("UPDATE sessions SET conversation_id = ? WHERE id = ?"),

    insertTurn: query<[TurnInsert]>(
      `INSERT INTO turns (id, session_id, seq, input, phase, attempt, replay_of, retry_of, continues,
         bridge_generation, created_at, updated_at)
       VALUES (@id, @sessionId, @seq, @input, @phase, @attempt, @replayOf, @retryOf, @continues,
         @generation, @now, @now)`,
    ),
    updateTurn: query<[TurnUpdate]>(
      `UPDATE turns SET phase = @phase, effects = @effects,
         conversation_id = coalesce(@conversationId, conversation_id),
         spawn_marker = coalesce(@spawnMarker, spawn_marker),
         pid = coalesce(@pid, pid), start_time = coalesce(@startTime, start_time),
         error_code = coalesce(@errorCode, error_code), error_message = coalesce(@errorMessage, error_message),
         bridge_generation = coalesce(@generation, bridge_generation),
         updated_at = @now, ended_at = coalesce(@endedAt, ended_at)
       WHERE id = @id`,
    ),
    // A batch of stream events never changes the phase: writing `phase` (even unchanged) would rework
    // the turns' partial indexes, which cost more than the batch's own inserts.
    updateTurnStream: query<[TurnStreamUpdate]>(
      `UPDATE turns SET effects = @effects, conversation_id = coalesce(@conversationId, conversation_id),
         stdout_through = coalesce(@stdoutThrough, stdout_through), updated_at = @now WHERE id = @id`,
    ),
    nextSeq: value<[string], number>("SELECT coalesce(max(seq), 0) + 1 FROM turns WHERE session_id = ?"),
    turn: query<[string], TurnRow>(`SELECT ${turnColumns} WHERE t.id = ?`),
    turnPhase: query<[string], TurnState>("SELECT id, session_id, phase, effects FROM turns WHERE id = ?"),
    activeTurn: query<[string], TurnRow>(
      `SELECT ${turnColumns} WHERE t.session_id = ? AND t.phase IN ${activePhases}`,
    ),
    latestTurn: query<[string], TurnRow>(
      `SELECT ${turnColumns} WHERE t.session_id = ? ORDER BY t.seq DESC LIMIT 1`,
    ),
    nextQueuedTurn: query<[string], TurnRow>(
      `SELECT ${turnColumns} WHERE t.session_id = ? AND t.phase = 'queued' ORDER BY t.seq LIMIT 1`,
    ),
    queuedTurns: query<[string], TurnRow>(
      `SELECT ${turnColumns} WHERE t.session_id = ? AND t.phase = 'queued' ORDER BY t.seq`,
    ),
    turnsOfSession: query<[string], TurnRow>(`SELECT ${turnColumns} WHERE t.session_id = ? ORDER BY t.seq`),
    conversationEstablished: value<[string, string, string], 1>(
      `SELECT 1 FROM turns WHERE session_id = ? AND conversation_id = ? AND phase = 'completed' AND id <> ?
       LIMIT 1`,
    ),
    unfinishedTurns: query<[], TurnRow>(unfinishedTurnsSql),
    retryOf: query<[string], TurnRow>(`SELECT ${turnColumns} WHERE t.retry_of = ?`),
    replayOf: query<[string], TurnRow>(`SELECT ${turnColumns} WHERE t.replay_of = ?`),
    continuationOf: query<[string], TurnRow>(`SELECT ${turnColumns} WHERE t.continues = ?`),
    setCliLostDecision: query<[CliLostDecision, number, string]>(
      "UPDATE turns SET cli_lost_decision = ?, updated_at = ? WHERE id = ? AND cli_lost_decision IS NULL",
    ),

    nextEventIndex: value<[string], number>(
      "SELECT coalesce(max(idx) + 1, 0) FROM turn_events WHERE turn_id = ?",
    ),
    events: query<[string, number, number], EventRow>(
      "SELECT turn_id, idx, at, payload FROM turn_events WHERE turn_id = ? AND idx >= ? ORDER BY idx LIMIT ?",
    ),

    insertToolGate: query<[ToolGateRow]>(
      `INSERT INTO tool_gates (turn_id, tool_call_id, tool_name, effect_free, event_idx, admitted_at)
       VALUES (@turn_id, @tool_call_id, @tool_name, @effect_free, @event_idx, @admitted_at)`,
    ),
    toolGate: query<[string, string], ToolAdmissionRow>(
      `SELECT g.*, json_extract(e.payload, '$.inputPreview') AS input_preview, c.completed_at
       FROM tool_gates g JOIN turn_events e ON e.turn_id = g.turn_id AND e.idx = g.event_idx
       LEFT JOIN tool_completions c ON c.turn_id = g.turn_id AND c.tool_call_id = g.tool_call_id
       WHERE g.turn_id = ? AND g.tool_call_id = ?`,
    ),
    toolGatesOfTurn: query<[string], ToolAdmissionRow>(
      `SELECT g.*, json_extract(e.payload, '$.inputPreview') AS input_preview, c.completed_at
       FROM tool_gates g JOIN turn_events e ON e.turn_id = g.turn_id AND e.idx = g.event_idx
       LEFT JOIN tool_completions c ON c.turn_id = g.turn_id AND c.tool_call_id = g.tool_call_id
       WHERE g.turn_id = ? ORDER BY g.event_idx`,
    ),
    insertToolCompletion: query<[string, string, number]>(
      "INSERT OR IGNORE INTO tool_completions (turn_id, tool_call_id, completed_at) VALUES (?, ?, ?)",
    ),

    insertSecretRequest: query<[SecretRequestRow]>(
      `INSERT INTO secret_requests (id, turn_id, session_id, tool_call_key, name, prompt, status, bridge_generation,
         created_at, updated_at, resolved_at)
       VALUES (@id, @turn_id, @session_id, @tool_call_key, @name, @prompt, @status, @bridge_generation,
         @created_at, @updated_at, @resolved_at)`,
    ),
    secretRequest: query<[string], SecretRequestRow>("SELECT * FROM secret_requests WHERE id = ?"),
    secretRequestByToolCall: query<[string, string], SecretRequestRow>(
      "SELECT * FROM secret_requests WHERE turn_id = ? AND tool_call_key = ?",
    ),
    secretRequestsOfTurn: query<[string], SecretRequestRow>(
      "SELECT * FROM secret_requests WHERE turn_id = ? ORDER BY created_at, id",
    ),
    pendingSecretRequestsOfTurn: query<[string], SecretRequestRow>(
      "SELECT * FROM secret_requests WHERE turn_id = ? AND status = 'pending' ORDER BY created_at, id",
    ),
    openSecretRequests: query<[], SecretRequestRow>(
      "SELECT * FROM secret_requests WHERE status IN ('pending', 'orphaned') ORDER BY created_at, id",
    ),
    openSecretRequestsOfSession: query<[string], SecretRequestRow>(
      `SELECT * FROM secret_requests WHERE session_id = ? AND status IN ('pending', 'orphaned')
       ORDER BY created_at, id`,
    ),
    resolveSecretRequest: query<[string, number, number | null, string | null, string]>(
      "UPDATE secret_requests SET status = ?, updated_at = ?, resolved_at = ?, submitted_by = ? WHERE id = ?",
    ),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
