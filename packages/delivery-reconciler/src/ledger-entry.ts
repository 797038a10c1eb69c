import { type LedgerFailureReason, type LedgerState, ToolCallId } from "@bridgeworks/protocol";
import type { DeadlinePhase } from "./deadlines.js";
import type { ContextMessage, FailedToolResult, ToolCall, ToolResult } from "./types.js";

// One call as the ledger keeps it while its round lasts, and what is kept of it after.

export type CallProgress = "unseen" | "emitted" | "undelivered" | "forwarded";

export interface Waiter<M extends ContextMessage> {
  resolve(result: ToolResult<M>): void;
  reject(error: Error): void;
  detach(): void;
}

export type Settlement<M extends ContextMessage> =
  | { readonly state: "resolved" }
  | { readonly state: "failed"; readonly reason: LedgerFailureReason; readonly answer: ToolResult<M> };

export interface Deadline {
  readonly phase: DeadlinePhase;
  readonly since: number;
  readonly at: number;
  readonly handle: unknown;
}

export interface Entry<M extends ContextMessage> {
  readonly id: ToolCallId;
  call: ToolCall | undefined;
  progress: CallProgress;
  waiter: Waiter<M> | undefined;
  /** Pi's result, held until the handler arrives. */
  queued: M | undefined;
  /** Pi's result reached the ledger (queued or handed over). */
  delivered: boolean;
  /** Reported missing from a context once; its deadline shortened. */
  missing: boolean;
  settled: Settlement<M> | undefined;
  deadline: Deadline | undefined;
}

/** What is kept of a call once a quiescence check closed its round: enough to classify repeats. */
export interface ArchivedEntry {
  readonly state: "resolved" | "failed";
  readonly reason?: LedgerFailureReason;
  readonly delivered: boolean;
}

export function newEntry<M extends ContextMessage>(id: ToolCallId): Entry<M> {
  return {
    id,
    call: undefined,
    progress: "unseen",
    waiter: undefined,
    queued: undefined,
    delivered: false,
    missing: false,
    settled: undefined,
    deadline: undefined,
  };
}

/** A result present beats everything; then "undelivered" (the failure mode worth seeing), the handler. */
export function stateOf<M extends ContextMessage>(entry: Entry<M>): LedgerState {
  if (entry.settled) return entry.settled.state;
  if (entry.queued !== undefined) return "result_queued";
  if (entry.progress === "undelivered") return "undelivered";
  if (entry.waiter || entry.progress === "unseen") return "handler_waiting";
  return entry.progress === "forwarded" ? "forwarded" : "emitted";
}

export function failure(
  id: ToolCallId,
  reason: LedgerFailureReason,
  text: string,
  retryable: boolean,
): FailedToolResult {
  return { kind: "error", toolCallId: id, reason, text, retryable };
}

export function parseToolCallId(value: unknown, field: string): ToolCallId {
  const parsed = ToolCallId.safeParse(value);
  if (!parsed.success)
    throw new TypeError(`${field} must be a non-empty string, got ${JSON.stringify(value)}`);
  return parsed.data;
}
