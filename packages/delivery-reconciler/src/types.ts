import type { DeliveryDiagnosticRecord, LedgerFailureReason, ToolCallId } from "@bridgeworks/protocol";

/**
 * The part of a Pi context message (`context.messages[i]`) the ledger reads. Pi's own `Message` union
 * is assignable to it, so the app passes `context.messages` as is:
 * - a result is `{role: "toolResult", toolCallId}`;
 * - an assistant message lists its calls as `content` blocks `{type: "toolCall", id}`;
 * - `timestamp` helps recognise a message across calls (the context array is rebuilt for every call).
 */
export interface ContextMessage {
  readonly role: string;
  readonly toolCallId?: unknown;
  readonly content?: unknown;
  readonly timestamp?: unknown;
}

/** A `tool_use` block as Claude emitted it (arguments complete, from `content_block_stop`). */
export interface ToolCall {
  readonly id: ToolCallId;
  readonly name: string;
  readonly arguments: unknown;
}

/** What an MCP handler receives: Pi's result message, or an error to return with `isError: true`. */
export type ToolResult<M extends ContextMessage = ContextMessage> = DeliveredToolResult<M> | FailedToolResult;

export interface DeliveredToolResult<M extends ContextMessage = ContextMessage> {
  readonly kind: "result";
  readonly toolCallId: ToolCallId;
  /** The `toolResult` message from Pi's context, untouched. */
  readonly message: M;
}

export interface FailedToolResult {
  readonly kind: "error";
  readonly toolCallId: ToolCallId;
  readonly reason: LedgerFailureReason;
  /** For the model: what happened and whether retrying is safe. */
  readonly text: string;
  /** True when Pi never ran the call, so running it again cannot duplicate an effect. */
  readonly retryable: boolean;
}

/** Receives one record per ledger transition, delivery, rescan, stall and failed quiescence check. */
export type DiagnosticSink = (record: DeliveryDiagnosticRecord) => void;
