import { lazySchema, type PermissionPromptAnswer } from "@bridgeworks/protocol";
import { describeError, type McpToolResult, mcpTool } from "@bridgeworks/runtime";
import { z } from "zod";
import type { FlootToolCall } from "./mcp-tool-call.js";

export const permissionPromptToolName = "permissionPrompt";

/**
 * What Claude Code 2.1.332 sends its `--permission-prompt-tool`: `{tool_name, input, tool_use_id}` (read
 * in the binary: `e.call({tool_name:h.name,input:se,tool_use_id:I,...})`, and seen in
 * test/permission-real.test.ts); it may add fields, so unknown ones are ignored.
 */
const PermissionPromptArguments = lazySchema(() =>
  z.object({
    tool_name: z.string().min(1).max(256),
    input: z.record(z.string(), z.unknown()),
    tool_use_id: z.string().min(1).max(256).optional(),
  }),
);

/**
 * Answers a permission prompt as Claude Code expects it: one text block holding
 * `{"behavior":"allow","updatedInput":{…}}` or `{"behavior":"deny","message":"…"}` (the binary's own
 * error text: "Expected {behavior: 'allow', updatedInput?: object} or {behavior: 'deny', message: string}").
 */
export const permissionPromptTool = mcpTool({
  name: permissionPromptToolName,
  description:
    "Claude Code's permission prompt (--permission-prompt-tool): asks the human whether a tool call may " +
    "run. Not for the model to call.",
  input: PermissionPromptArguments,
  annotations: { readOnlyHint: false },
  refuse: () => answerOf({ behavior: "deny", message: "floot: a malformed permission prompt" }),
  async handler(args, call: FlootToolCall) {
    return answerOf(await decide(args, call));
  },
});

async function decide(
  { tool_name: toolName, input, tool_use_id }: z.output<typeof PermissionPromptArguments>,
  { context, permissions, toolCallKey, signal, logger }: FlootToolCall,
): Promise<PermissionPromptAnswer> {
  // The model calling this tool itself would only make a request no tool call stands behind.
  if (toolName.endsWith(`__${permissionPromptToolName}`)) {
    return { behavior: "deny", message: "floot: the permission prompt tool is not for the model" };
  }
  try {
    return await permissions.ask(
      context,
      { toolCallKey: tool_use_id ?? toolCallKey, toolName, input },
      signal,
    );
  } catch (error) {
    logger.warn("permission prompt failed", { turn: context.turnId, error: describeError(error) });
    return { behavior: "deny", message: `floot: the call was not run: ${describeError(error)}` };
  }
}

function answerOf(answer: PermissionPromptAnswer): McpToolResult {
  return { content: [{ type: "text", text: JSON.stringify(answer) }] };
}
