import type { ServerResponse } from "node:http";
import type { FlootApiError, FlootApiErrorCode } from "@bridgeworks/protocol";
import { describeError, type Logger, sendJson } from "@bridgeworks/runtime";
import { JournalError, type JournalErrorCode } from "@bridgeworks/turn-journal";
import { PermissionBrokerError, type PermissionBrokerErrorCode } from "../permission-broker.js";
import { SecretBrokerError, type SecretBrokerErrorCode } from "../secret-broker.js";

/** Every code an answer of the API can carry: protocol's own, and the journal's and broker's refusals. */
export type ApiErrorCode =
  | FlootApiErrorCode
  | JournalErrorCode
  | SecretBrokerErrorCode
  | PermissionBrokerErrorCode;

// Exhaustive over the code unions: a code added to the journal, the broker or the protocol is a type
// error here until it has a status, never a silent 500.
const apiErrorStatus: Record<FlootApiErrorCode, number> = {
  bad_request: 400,
  invalid_body: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  conflict: 409,
  sandbox_unavailable: 409,
  sign_in_link_used: 401,
  sign_in_link_expired: 401,
  sign_in_link_unknown: 401,
  internal: 500,
};

const journalErrorStatus: Record<JournalErrorCode, number> = {
  invalid_input: 400,
  invalid_search_query: 400,
  session_not_found: 404,
  turn_not_found: 404,
  secret_request_not_found: 404,
  session_exists: 409,
  session_stopped: 409,
  session_busy: 409,
  invalid_transition: 409,
  not_accepting_events: 409,
  turn_not_retryable: 409,
  turn_has_effects: 409,
  tool_call_not_admitted: 404,
  decision_made: 409,
  secret_request_closed: 409,
  permission_request_not_found: 404,
  permission_request_closed: 409,
  journal_too_new: 500,
};

const brokerErrorStatus: Record<SecretBrokerErrorCode, number> = {
  secret_request_not_found: 404,
  secret_request_closed: 409,
  secret_too_short: 400,
};

const permissionErrorStatus: Record<PermissionBrokerErrorCode, number> = {
  digest_mismatch: 409,
};

/** A refusal the HTTP layer itself makes: its status follows from its code. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: FlootApiErrorCode,
    message: string,
    readonly details: { field?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = apiErrorStatus[code];
  }
}

/** 405, with the `Allow` header naming what the path does take. */
export function notAllowed(method: string | undefined, path: string, allow: readonly string[]): ApiError {
  return new ApiError("method_not_allowed", `${method} is not allowed on ${path}`, {
    headers: { allow: allow.join(", ") },
  });
}

/** Answers `error` as `{error: {code, message, field?}}`; anything unexpected is logged and answered 500. */
export function sendError(response: ServerResponse, error: unknown, logger: Logger): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  let status: number;
  let code: ApiErrorCode;
  let message: string;
  let field: string | undefined;
  let headers: Record<string, string> = {};
  if (error instanceof ApiError) {
    ({ status, code, message } = error);
    ({ field, headers = {} } = error.details);
  } else if (error instanceof JournalError) {
    ({ code, message } = error);
    status = journalErrorStatus[error.code];
  } else if (error instanceof SecretBrokerError) {
    ({ code, message } = error);
    status = brokerErrorStatus[error.code];
  } else if (error instanceof PermissionBrokerError) {
    ({ code, message } = error);
    status = permissionErrorStatus[error.code];
  } else {
    logger.error("request failed", { error: describeError(error) });
    code = "internal";
    status = apiErrorStatus.internal;
    message = "internal error";
  }
  const body: FlootApiError = { error: { code, message, ...(field !== undefined && { field }) } };
  sendJson(response, status, body, headers);
}
