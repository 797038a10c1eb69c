import type {
  Backend,
  CliLostDecision,
  DecisionActor,
  SecretRequest,
  SecretRequestStatus,
  SessionRecord,
  SessionStatus,
  ToolAdmission,
  TurnEvent,
  TurnEventEnvelope,
  TurnPhase,
  TurnRecord,
} from "@bridgeworks/protocol";
import { isoTime } from "./clock.js";
import { effectsFromBits } from "./effects.js";

// Rows come from our own, already validated writes: they are mapped, not re-parsed.

export interface SessionRow {
  id: string;
  backend: Backend;
  conversation_id: string | null;
  created_at: number;
  stopped_at: number | null;
  title: string | null;
  active_turn_id: string | null;
  active_phase: TurnPhase | null;
  queued_turns: number;
}

export interface TurnRow {
  id: string;
  session_id: string;
  seq: number;
  backend: Backend;
  input: string;
  phase: TurnPhase;
  attempt: number;
  replay_of: string | null;
  retry_of: string | null;
  continues: string | null;
  cli_lost_decision: CliLostDecision | null;
  effects: number;
  bridge_generation: number;
  conversation_id: string | null;
  spawn_marker: string | null;
  pid: number | null;
  start_time: string | null;
  stdout_through: number | null;
  error_code: string | null;
  error_message: string | null;
  event_count: number;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

export interface SecretRequestRow {
  id: string;
  turn_id: string;
  session_id: string;
  tool_call_key: string;
  name: string;
  prompt: string;
  status: SecretRequestStatus;
  bridge_generation: number;
  created_at: number;
  updated_at: number;
  resolved_at: number | null;
  submitted_by: string | null;
}

export interface ToolGateRow {
  turn_id: string;
  tool_call_id: string;
  tool_name: string;
  effect_free: 0 | 1;
  event_idx: number;
  admitted_at: number;
}

export interface EventRow {
  turn_id: string;
  idx: number;
  at: number;
  payload: string;
}

function sessionStatus(row: SessionRow): SessionStatus {
  if (row.stopped_at !== null) return "stopped";
  if (row.active_phase === "accepted" || row.active_phase === "spawning") return "provisioning";
  if (row.active_phase !== null) return "running";
  return "idle";
}

export function toSessionRecord(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    backend: row.backend,
    status: sessionStatus(row),
    ...(row.conversation_id !== null && { conversationId: row.conversation_id }),
    ...(row.active_turn_id !== null && { activeTurnId: row.active_turn_id }),
    queuedTurns: row.queued_turns,
    createdAt: isoTime(row.created_at),
    ...(row.stopped_at !== null && { stoppedAt: isoTime(row.stopped_at) }),
    ...(row.title !== null && { title: row.title }),
  };
}

export function toTurnRecord(row: TurnRow): TurnRecord {
  return {
    id: row.id,
    sessionId: row.session_id,
    seq: row.seq,
    backend: row.backend,
    input: JSON.parse(row.input) as TurnRecord["input"],
    phase: row.phase,
    attempt: row.attempt,
    ...(row.replay_of !== null && { replayOf: row.replay_of }),
    ...(row.retry_of !== null && { retryOf: row.retry_of }),
    ...(row.continues !== null && { continues: row.continues }),
    ...(row.cli_lost_decision !== null && { cliLostDecision: row.cli_lost_decision }),
    effects: effectsFromBits(row.effects),
    bridgeGeneration: row.bridge_generation,
    ...(row.conversation_id !== null && { conversationId: row.conversation_id }),
    ...(row.spawn_marker !== null && { spawnMarker: row.spawn_marker }),
    ...(row.pid !== null &&
      row.start_time !== null && { process: { pid: row.pid, startTime: row.start_time } }),
    ...(row.stdout_through !== null && { stdoutThrough: row.stdout_through }),
    ...(row.error_code !== null && { error: { code: row.error_code, message: row.error_message ?? "" } }),
    eventCount: row.event_count,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
    ...(row.ended_at !== null && { endedAt: isoTime(row.ended_at) }),
  };
}

export function toSecretRequest(row: SecretRequestRow): SecretRequest {
  return {
    id: row.id,
    turnId: row.turn_id,
    sessionId: row.session_id,
    toolCallKey: row.tool_call_key,
    name: row.name,
    prompt: row.prompt,
    status: row.status,
    bridgeGeneration: row.bridge_generation,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
    ...(row.resolved_at !== null && { resolvedAt: isoTime(row.resolved_at) }),
    ...(row.submitted_by !== null && { submittedBy: JSON.parse(row.submitted_by) as DecisionActor }),
  };
}

export function toEventEnvelope(row: EventRow): TurnEventEnvelope {
  return {
    turnId: row.turn_id,
    index: row.idx,
    at: isoTime(row.at),
    event: JSON.parse(row.payload) as TurnEvent,
  };
}

/** A gate record with its call's preview and, once its hook reported it, its end. */
export type ToolAdmissionRow = ToolGateRow & { input_preview: string; completed_at: number | null };

export function toToolAdmission(row: ToolAdmissionRow): ToolAdmission {
  return {
    turnId: row.turn_id,
    toolCallId: row.tool_call_id,
    toolName: row.tool_name,
    inputPreview: row.input_preview,
    effectFree: row.effect_free === 1,
    eventIndex: row.event_idx,
    admittedAt: isoTime(row.admitted_at),
    ...(row.completed_at !== null && { completedAt: isoTime(row.completed_at) }),
  };
}
