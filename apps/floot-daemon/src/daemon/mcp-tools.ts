import { type Logger, McpToolTable, mcpErrorResult } from "@bridgeworks/runtime";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { flootVersion } from "../version.js";
import type { FlootToolCall } from "./mcp-tool-call.js";
import { flootTools } from "./mcp-tool-definitions.js";
import type { PermissionBroker } from "./permission-broker.js";
import type { SecretBroker, TurnContext } from "./secret-broker.js";

const flootToolTable = new McpToolTable<FlootToolCall>(flootTools, {
  unknownTool: async (name) => mcpErrorResult(`unknown tool ${name}`),
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
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: flootToolTable.list() }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args, _meta } = request.params;
    const toolCallKey = toolCallKeyOf(_meta as Record<string, unknown> | undefined, extra.requestId);
    return flootToolTable.call(name, args, {
      context,
      secrets,
      permissions,
      logger,
      toolCallKey,
      signal: extra.signal,
    });
  });
  return server;
}
