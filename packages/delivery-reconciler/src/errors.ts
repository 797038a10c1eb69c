import type { ToolCallId } from "@bridgeworks/protocol";

/** Claude Code cancelled the MCP request of a waiting handler (its `signal` aborted). */
export class HandlerCancelledError extends Error {
  override readonly name = "HandlerCancelledError";
  constructor(
    readonly toolCallId: ToolCallId,
    options?: { cause?: unknown },
  ) {
    super(`the MCP request for tool call ${toolCallId} was cancelled`, options);
  }
}

export type HandlerRefusal = "invalid_id" | "handler_already_waiting" | "already_resolved";

/** `awaitResult` refused a handler: the caller should answer the MCP request with this error. */
export class HandlerRefusedError extends Error {
  override readonly name = "HandlerRefusedError";
  constructor(
    readonly code: HandlerRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** A method that changes the ledger was called after `dispose()`. */
export class LedgerDisposedError extends Error {
  override readonly name = "LedgerDisposedError";
  constructor(method: string) {
    super(`ToolCallLedger.${method} called after dispose()`);
  }
}
