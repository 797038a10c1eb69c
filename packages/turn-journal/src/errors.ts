export type JournalErrorCode =
  | "invalid_input"
  | "session_exists"
  | "session_not_found"
  | "session_stopped"
  | "session_busy"
  | "turn_not_found"
  | "invalid_transition"
  | "not_accepting_events"
  | "turn_not_retryable"
  | "turn_has_effects"
  | "tool_call_not_admitted"
  | "decision_made"
  | "secret_request_not_found"
  | "secret_request_closed"
  | "permission_request_not_found"
  | "permission_request_closed"
  | "invalid_search_query"
  | "journal_too_new";

/** A refusal the caller can act on: `code` says what, `message` names the field or the record. */
export class JournalError extends Error {
  readonly code: JournalErrorCode;

  constructor(code: JournalErrorCode, message: string) {
    super(message);
    this.name = "JournalError";
    this.code = code;
  }
}

/** The part of a zod schema the journal uses (zod is protocol's dependency, not ours). */
export interface InputSchema<T> {
  safeParse(
    value: unknown,
  ):
    | { success: true; data: T }
    | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

/** Validates an API input, naming the offending field (`what.path`) in the error. */
export function parseInput<T>(schema: InputSchema<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => {
    const path = [what, ...issue.path.map(String)].join(".");
    return `${path}: ${issue.message}`;
  });
  throw new JournalError("invalid_input", details.join("; "));
}
