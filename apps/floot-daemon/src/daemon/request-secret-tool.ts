import { RequestSecretToolInput } from "@bridgeworks/protocol";
import { describeError, mcpErrorResult, mcpTool } from "@bridgeworks/runtime";
import type { FlootToolCall } from "./mcp-tool-call.js";

export const requestSecretToolName = "requestSecret";

/** Asks the human for a secret; the model is told where to read it, never the value. */
export const requestSecretTool = mcpTool({
  name: requestSecretToolName,
  description:
    "Ask the human for a secret (a token, a password). Waits until they answer. The value is never " +
    "shown to you: the result names a file your commands can read it from while this turn lasts.",
  input: RequestSecretToolInput,
  // Asking a human is an act: a replay would ask again.
  annotations: { readOnlyHint: false },
  meta: { "anthropic/alwaysLoad": true },
  async handler(args, { context, secrets, logger, toolCallKey, signal }: FlootToolCall) {
    try {
      const answer = await secrets.ask(context, { toolCallKey, ...args }, signal);
      if (answer.kind === "withdrawn") return mcpErrorResult(`requestSecret ${args.name}: ${answer.reason}`);
      const { credential } = answer;
      logger.info("secret provided to a turn", { turn: context.turnId, credential: credential.id });
      return {
        content: [
          {
            type: "text" as const,
            text:
              `The human provided ${credential.name}. Its value is deliberately not shown here. It is in the ` +
              `file ${credential.path} (readable by your commands until this turn ends); use it like ` +
              `${credential.name}="$(cat '${credential.path}')" your-command`,
          },
        ],
      };
    } catch (error) {
      return mcpErrorResult(`requestSecret failed: ${describeError(error)}`);
    }
  },
});
