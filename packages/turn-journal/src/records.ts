import type { PermissionRequest, SecretRequest, SessionRecord, TurnRecord } from "@bridgeworks/protocol";
import type { JournalConnection } from "./connection.js";
import { JournalError } from "./errors.js";
import { type PermissionRequestRow, toPermissionRequest } from "./permission-rows.js";
import {
  type SecretRequestRow,
  type TurnRow,
  toSecretRequest,
  toSessionRecord,
  toTurnRecord,
} from "./rows.js";

// The records each area reads back, or refuses to act on when they do not exist (`*_not_found`).

export function bridgeGeneration({ sql }: JournalConnection): number {
  return sql.generation.get() ?? 0;
}

export function findSession({ sql }: JournalConnection, sessionId: string): SessionRecord | undefined {
  const row = sql.session.get(sessionId);
  return row && toSessionRecord(row);
}

export function requireSession(connection: JournalConnection, sessionId: string): SessionRecord {
  const session = findSession(connection, sessionId);
  if (!session) throw new JournalError("session_not_found", `session ${sessionId} does not exist`);
  return session;
}

export function requireTurnRow({ sql }: JournalConnection, turnId: string): TurnRow {
  const row = sql.turn.get(turnId);
  if (!row) throw new JournalError("turn_not_found", `turn ${turnId} does not exist`);
  return row;
}

export function requireTurn(connection: JournalConnection, turnId: string): TurnRecord {
  return toTurnRecord(requireTurnRow(connection, turnId));
}

export function requireSecretRequestRow({ sql }: JournalConnection, requestId: string): SecretRequestRow {
  const row = sql.secretRequest.get(requestId);
  if (!row) throw new JournalError("secret_request_not_found", `secret request ${requestId} does not exist`);
  return row;
}

export function requireSecretRequest(connection: JournalConnection, requestId: string): SecretRequest {
  return toSecretRequest(requireSecretRequestRow(connection, requestId));
}

export function requirePermissionRow(
  { permissionSql }: JournalConnection,
  requestId: string,
): PermissionRequestRow {
  const row = permissionSql.byId.get(requestId);
  if (!row) {
    throw new JournalError("permission_request_not_found", `permission request ${requestId} does not exist`);
  }
  return row;
}

export function requirePermissionRequest(
  connection: JournalConnection,
  requestId: string,
): PermissionRequest {
  return toPermissionRequest(requirePermissionRow(connection, requestId));
}
