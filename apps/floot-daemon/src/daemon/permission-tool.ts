import { lazySchema } from "@bridgeworks/protocol";
import { describeError, type Logger } from "@bridgeworks/runtime";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { PermissionBroker } from "./permission-broker.js";
import type { TurnContext } from "./secret-broker.js";

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

export const permissionPromptTool = {
  name: permissionPromptToolName,
  description:
    "Claude Code's permission prompt (--permission-prompt-tool): asks the human whether a tool call may " +
    "run. Not for the model to call.",
  inputSchema: {
    type: "object",
    properties: {
      tool_name: { type: "string" },
      input: { type: "object" },
      tool_use_id: { type: "string" },
    },
    required: ["tool_name", "input"],
  },
  annotations: { readOnlyHint: false },
};

/**
 * Answers a permission prompt as Claude Code expects it: one text block holding
 * `{"behavior":"allow","updatedInput":{…}}` or `{"behavior":"deny","message":"…"}` (the binary's own
 * error text: "Expected {behavior: 'allow', updatedInput?: object} or {behavior: 'deny', message: string}").
 */
export async function answerPermissionPrompt(
  context: TurnContext,
  permissions: PermissionBroker,
  args: unknown,
  fallbackKey: string,
  signal: AbortSignal,
  logger: Logger,
): Promise<CallToolResult> {
  const parsed = PermissionPromptArguments.safeParse(args);
  const answer = await (async () => {
    if (!parsed.success)
      return { behavior: "deny" as const, message: "floot: a malformed permission prompt" };
    const { tool_name: toolName, input, tool_use_id } = parsed.data;
    // The model calling this tool itself would only make a request no tool call stands behind.
    if (toolName.endsWith(`__${permissionPromptToolName}`)) {
      return { behavior: "deny" as const, message: "floot: the permission prompt tool is not for the model" };
    }
    try {
      return await permissions.ask(
        context,
        { toolCallKey: tool_use_id ?? fallbackKey, toolName, input },
        signal,
      );
    } catch (error) {
      logger.warn("permission prompt failed", { turn: context.turnId, error: describeError(error) });
      return { behavior: "deny" as const, message: `floot: the call was not run: ${describeError(error)}` };
    }
  })();
  return { content: [{ type: "text", text: JSON.stringify(answer) }] };
}
