import type { SocketRequestHandler } from "@bridgeworks/control-channel";
import { describeIssues, type ToolGateAnswer, ToolHookRequest } from "@bridgeworks/protocol";
import { describeError, type Logger } from "@bridgeworks/runtime";
import type { JournalGate } from "@bridgeworks/turn-journal";
import type { TurnContext } from "./secret-broker.js";
import type { Trace } from "./trace.js";

export interface ToolGateOptions {
  journal: { gate: Pick<JournalGate, "admitToolCall" | "recordToolCompletion"> };
  /** The tools the turn's session declared effect-free; undefined when the turn does not run here. */
  effectFreeToolsOf(turnId: string): ReadonlySet<string> | undefined;
  trace: Trace;
  logger: Logger;
}

/**
 * The daemon's side of the pre-tool gate: a tool call may start only once the journal has committed
 * it (`admitToolCall`, synchronous=FULL). The answer is written after that commit returns; anything
 * that stops the commit (an ended turn, a journal error) is a denial the model can read. A finished
 * call's report (`tool_completed`, its PostToolUse hook) is recorded the same way and acknowledged.
 */
export function createToolGate(options: ToolGateOptions): SocketRequestHandler<TurnContext> {
  const { journal, trace, logger } = options;
  return (context, raw): ToolGateAnswer => {
    const request = ToolHookRequest.safeParse(raw);
    if (!request.success) {
      return deny(`the gate request is malformed (${describeIssues(request.error.issues)})`);
    }
    if (request.data.type === "tool_completed") {
      const { toolCallId } = request.data;
      try {
        journal.gate.recordToolCompletion(context.turnId, toolCallId);
      } catch (error) {
        const message = describeError(error);
        logger.warn("tool completion not recorded", { turn: context.turnId, toolCallId, error: message });
        return deny(message);
      }
      return { decision: "allow" };
    }
    const { toolCallId, toolName, inputPreview } = request.data;
    trace("gate:received", { turnId: context.turnId, toolCallId, toolName });
    const effectFree = options.effectFreeToolsOf(context.turnId);
    if (effectFree === undefined) return deny(`turn ${context.turnId} is not running in this daemon`);
    try {
      journal.gate.admitToolCall(context.turnId, {
        toolCallId,
        toolName,
        inputPreview,
        effectFree: effectFree.has(toolName),
      });
    } catch (error) {
      const message = describeError(error);
      logger.warn("tool call not admitted", { turn: context.turnId, toolCallId, error: message });
      return deny(message);
    }
    trace("gate:committed", { turnId: context.turnId, toolCallId, toolName });
    return { decision: "allow" };
  };
}

function deny(reason: string): ToolGateAnswer {
  return { decision: "deny", reason };
}
