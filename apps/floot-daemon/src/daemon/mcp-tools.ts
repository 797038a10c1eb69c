import {
  describeError,
  type Logger,
  parseToolArguments,
  mcpErrorResult as toolError,
} from "@bridgeworks/runtime";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { flootVersion } from "../version.js";
import { flootTools } from "./mcp-tool-definitions.js";
import type { PermissionBroker } from "./permission-broker.js";
import { answerPermissionPrompt, permissionPromptToolName } from "./permission-tool.js";
import type { SecretBroker, TurnContext } from "./secret-broker.js";

const RequestSecretArguments = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "name must look like an environment variable name"),
  prompt: z.string().max(4000, "prompt must be at most 4000 characters").default(""),
});

/** The tool call's own id, so a repeated call finds its request instead of asking twice. */
function toolCallKeyOf(meta: Record<string, unknown> | undefined, requestId: string | number): string {
  const claude = meta?.["claudecode/toolUseId"];
  if (typeof claude === "string" && claude.length > 0) return claude;
  const codex = meta?.callId;
  if (typeof codex === "string" && codex.length > 0) return codex;
  return `mcp-request-${String(requestId)}`;
}

/**
 * One MCP server per authorized shim connection: the tools of the turn `context`. This module (with the
 * MCP SDK and ajv) is loaded by the first connection, never at start: see daemon.ts.
 */
export function createFlootMcpServer(
  context: TurnContext,
  secrets: SecretBroker,
  permissions: PermissionBroker,
  logger: Logger,
): Server {
  const server = new Server({ name: "floot", version: flootVersion }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: flootTools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args, _meta } = request.params;
    if (name === permissionPromptToolName) {
      const key = toolCallKeyOf(_meta as Record<string, unknown> | undefined, extra.requestId);
      return answerPermissionPrompt(context, permissions, args, key, extra.signal, logger);
    }
    if (name !== "requestSecret") return toolError(`unknown tool ${name}`);
    const parsed = parseToolArguments(RequestSecretArguments, args);
    if (!parsed.ok) return toolError(parsed.message);
    const toolCallKey = toolCallKeyOf(_meta as Record<string, unknown> | undefined, extra.requestId);
    try {
      const answer = await secrets.ask(context, { toolCallKey, ...parsed.value }, extra.signal);
      if (answer.kind === "withdrawn")
        return toolError(`requestSecret ${parsed.value.name}: ${answer.reason}`);
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
      return toolError(`requestSecret failed: ${describeError(error)}`);
    }
  });
  return server;
}
