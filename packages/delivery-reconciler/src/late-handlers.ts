import type { ToolCallId } from "@bridgeworks/protocol";
import { HandlerRefusedError } from "./errors.js";
import type { LedgerDiagnostics } from "./ledger-diagnostics.js";
import { type ArchivedEntry, type Entry, failure, type Settlement, stateOf } from "./ledger-entry.js";
import type { ContextMessage, ToolResult } from "./types.js";

// What an MCP handler gets for a call that was already settled: a failed call's answer again (its
// result is gone), a refusal for one already answered with its result. Each is recorded.

export function answerSettled<M extends ContextMessage>(
  entry: Entry<M>,
  settled: Settlement<M>,
  diagnostics: LedgerDiagnostics,
): Promise<ToolResult<M>> {
  diagnostics.transition(entry, "handler_after_settlement", stateOf(entry));
  if (settled.state === "failed") return Promise.resolve(settled.answer);
  return Promise.reject(
    new HandlerRefusedError("already_resolved", `tool call ${entry.id} was already answered with its result`),
  );
}

export function answerArchived<M extends ContextMessage>(
  id: ToolCallId,
  archived: ArchivedEntry,
  diagnostics: LedgerDiagnostics,
): Promise<ToolResult<M>> {
  diagnostics.archivedTransition(id, archived, "handler_after_settlement");
  if (archived.state === "resolved") {
    return Promise.reject(
      new HandlerRefusedError("already_resolved", `tool call ${id} was already answered with its result`),
    );
  }
  const reason = archived.reason ?? "deadline_expired";
  return Promise.resolve(
    failure(id, reason, `Tool call ${id} already failed (${reason}); its result is no longer held.`, false),
  );
}
