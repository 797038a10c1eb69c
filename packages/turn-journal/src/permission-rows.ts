import type {
  DecisionActor,
  PermissionDecision,
  PermissionRequest,
  PermissionRequestStatus,
} from "@bridgeworks/protocol";
import type { Database } from "better-sqlite3";
import { isoTime } from "./clock.js";
import type { Query } from "./statements.js";

export interface PermissionRequestRow {
  id: string;
  turn_id: string;
  session_id: string;
  tool_call_key: string;
  tool_name: string;
  input_summary: string;
  input_digest: string;
  unmatched_rules: string;
  /** `''` when the request suggests no rule (the column predates optional suggestions). */
  suggested_rule: string;
  status: PermissionRequestStatus;
  decision: string | null;
  created_at: number;
  updated_at: number;
  decided_at: number | null;
  applied_at: number | null;
  decided_by: string | null;
}

export function toPermissionRequest(row: PermissionRequestRow): PermissionRequest {
  return {
    id: row.id,
    turnId: row.turn_id,
    sessionId: row.session_id,
    toolCallKey: row.tool_call_key,
    toolName: row.tool_name,
    inputSummary: row.input_summary,
    inputDigest: row.input_digest,
    unmatchedRules: JSON.parse(row.unmatched_rules) as string[],
    ...(row.suggested_rule !== "" && { suggestedRule: row.suggested_rule }),
    status: row.status,
    ...(row.decision !== null && { decision: JSON.parse(row.decision) as PermissionDecision }),
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
    ...(row.decided_at !== null && { decidedAt: isoTime(row.decided_at) }),
    ...(row.applied_at !== null && { appliedAt: isoTime(row.applied_at) }),
    ...(row.decided_by !== null && { decidedBy: JSON.parse(row.decided_by) as DecisionActor }),
  };
}

type Row = PermissionRequestRow;

export interface PermissionStatements {
  insert: Query<[Record<string, unknown>]>;
  byId: Query<[string], Row>;
  byToolCall: Query<[string, string], Row>;
  open: Query<[], Row>;
  recent: Query<[number], Row>;
  openOfSession: Query<[string], Row>;
  pendingOfTurn: Query<[string], Row>;
  unapplied: Query<[string, string, string], Row>;
  setStatus: Query<[PermissionRequestStatus, number, string]>;
  decide: Query<[PermissionRequestStatus, string, number, number, string, string]>;
  apply: Query<[number, number, string]>;
  rules: Query<[string], string>;
  addRule: Query<[string, string, number]>;
  removeRule: Query<[string, string]>;
}

/** The permission statements, prepared once per connection beside the journal's own. */
export function preparePermissionStatements(db: Database): PermissionStatements {
  const rows = (sql: string) => db.prepare<unknown[], PermissionRequestRow>(sql);
  return {
    insert: db.prepare(
      `INSERT INTO permission_requests (id, turn_id, session_id, tool_call_key, tool_name, input_summary,
         input_digest, unmatched_rules, suggested_rule, status, created_at, updated_at)
       VALUES (@id, @turn_id, @session_id, @tool_call_key, @tool_name, @input_summary, @input_digest,
         @unmatched_rules, @suggested_rule, 'pending', @now, @now)`,
    ),
    byId: rows("SELECT * FROM permission_requests WHERE id = ?"),
    byToolCall: rows("SELECT * FROM permission_requests WHERE turn_id = ? AND tool_call_key = ?"),
    open: rows(
      "SELECT * FROM permission_requests WHERE status IN ('pending', 'orphaned') ORDER BY created_at, id",
    ),
    // Ids are UUIDv7: the primary key's order is the order they were asked in.
    recent: rows("SELECT * FROM permission_requests ORDER BY id DESC LIMIT ?"),
    openOfSession: rows(
      `SELECT * FROM permission_requests
       WHERE session_id = ? AND status IN ('pending', 'orphaned') ORDER BY created_at, id`,
    ),
    pendingOfTurn: rows("SELECT * FROM permission_requests WHERE turn_id = ? AND status = 'pending'"),
    unapplied: rows(
      `SELECT * FROM permission_requests
       WHERE session_id = ? AND tool_name = ? AND input_digest = ?
         AND status IN ('allowed', 'denied') AND applied_at IS NULL
       ORDER BY decided_at, id LIMIT 1`,
    ),
    setStatus: db.prepare<[PermissionRequestStatus, number, string]>(
      "UPDATE permission_requests SET status = ?, updated_at = ? WHERE id = ?",
    ),
    decide: db.prepare<[PermissionRequestStatus, string, number, number, string, string]>(
      `UPDATE permission_requests SET status = ?, decision = ?, decided_at = ?, updated_at = ?, decided_by = ?
       WHERE id = ?`,
    ),
    apply: db.prepare<[number, number, string]>(
      "UPDATE permission_requests SET applied_at = ?, updated_at = ? WHERE id = ? AND applied_at IS NULL",
    ),
    rules: db
      .prepare<[string], string>(
        "SELECT rule FROM session_rules WHERE session_id = ? ORDER BY created_at, rule",
      )
      .pluck(),
    addRule: db.prepare<[string, string, number]>(
      "INSERT OR IGNORE INTO session_rules (session_id, rule, created_at) VALUES (?, ?, ?)",
    ),
    removeRule: db.prepare<[string, string]>("DELETE FROM session_rules WHERE session_id = ? AND rule = ?"),
  };
}
