import {
  HandlerCancelledError,
  HandlerRefusedError,
  type ToolCallLedger,
} from "@bridgeworks/delivery-reconciler";
import { mcpErrorResult as errorResult } from "@bridgeworks/runtime";
import { toMcpToolResult } from "./content.js";
import type { ToolCallHandler } from "./mcp-tools.js";
import type { ToolResultMessage } from "./pi-types.js";
import type { ConversationMessage } from "./query-state.js";

/**
 * Claude Code's MCP `tools/call` for one of Pi's tools, answered from the ledger: Pi's result once a
 * later `streamSimple` context carries it, or an error result saying why there is none.
 */
export function toolCallAnswerer(ledger: ToolCallLedger<ConversationMessage>): ToolCallHandler {
  return async ({ toolUseId, name, signal }) => {
    if (toolUseId === undefined) {
      return errorResult(
        `Tool call ${name} carried no _meta["claudecode/toolUseId"]; without it no result can be paired, so it was not run.`,
      );
    }
    try {
      const answer = await ledger.awaitResult(toolUseId, signal);
      // A steering message comes in the same Pi context as the results it follows, and was pushed
      // before this continuation ran. Claude Code must hold it when the result arrives: it then sends
      // both in one request. Arriving after, it becomes a turn of its own that no Pi stream is open
      // for. The Agent SDK writes a pushed message within microtasks; one macrotask waits for that.
      await nextMacrotask();
      return answer.kind === "result"
        ? toMcpToolResult(answer.message as ToolResultMessage)
        : errorResult(answer.text);
    } catch (error) {
      if (error instanceof HandlerCancelledError || error instanceof HandlerRefusedError)
        return errorResult(error.message);
      throw error;
    }
  };
}

function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
