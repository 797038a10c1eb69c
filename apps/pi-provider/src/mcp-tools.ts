import {
  foreignToolInput,
  type JsonObjectSchema,
  type McpToolResult,
  McpToolTable,
  mcpTool,
} from "@bridgeworks/runtime";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { PiTool } from "./pi-types.js";
import { piProviderVersion } from "./version.js";

export const MCP_SERVER_NAME = "pi";
export const MCP_TOOL_PREFIX = `mcp__${MCP_SERVER_NAME}__`;
export const TOOL_USE_ID_META = "claudecode/toolUseId";

/**
 * Pi's built-in tools that only read. Claude Code dispatches calls to MCP tools marked `readOnlyHint`
 * concurrently, and every other call one at a time; the ledger handles both orders.
 */
const readOnlyTools = new Set(["read", "grep", "find", "ls"]);

/** Answers one `tools/call`: `toolUseId` is Claude's `tool_use` id, from the request's `_meta`. */
export type ToolCallHandler = (call: {
  toolUseId: string | undefined;
  name: string;
  signal: AbortSignal;
}) => Promise<McpToolResult>;

/** What the server knows of one `tools/call` beside its name and arguments. */
interface PiToolCall {
  toolUseId: string | undefined;
  signal: AbortSignal;
}

/**
 * Pi's tools served to Claude Code as one in-process MCP server (the Agent SDK's `type: "sdk"`), with
 * their JSON Schema as is: Pi validates their arguments, which reach it from Claude's stream, so the
 * table lists each schema byte for byte. A low-level server rather than `createSdkMcpServer`, which
 * re-derives the schemas through zod and reads no `_meta`.
 */
export class PiToolServer {
  readonly server: Server;
  private table: McpToolTable<PiToolCall>;
  private toolsKey = "";

  constructor(private readonly onCall: ToolCallHandler) {
    this.server = new Server(
      { name: MCP_SERVER_NAME, version: piProviderVersion },
      { capabilities: { tools: { listChanged: true } } },
    );
    this.table = this.tableOf([]);
    this.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.table.list() }));
    this.server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const toolUseId = request.params._meta?.[TOOL_USE_ID_META];
      return this.table.call(request.params.name, request.params.arguments, {
        toolUseId: typeof toolUseId === "string" ? toolUseId : undefined,
        signal: extra.signal,
      });
    });
  }

  /**
   * Pi's active tools for the next request, listed by name so their order in Pi never changes the
   * bytes Claude Code sends (a prompt-cache prefix); Claude Code re-lists them when they changed.
   */
  setTools(tools: readonly PiTool[]): void {
    const key = toolsKey(tools);
    if (key === this.toolsKey) return;
    const wasSet = this.toolsKey !== "";
    this.table = this.tableOf(byName(tools));
    this.toolsKey = key;
    if (wasSet) this.server.sendToolListChanged().catch(() => {});
  }

  private tableOf(tools: readonly PiTool[]): McpToolTable<PiToolCall> {
    const answer = (name: string, call: PiToolCall) => this.onCall({ ...call, name });
    return new McpToolTable<PiToolCall>(
      tools.map((tool) =>
        mcpTool({
          name: tool.name,
          description: tool.description,
          input: foreignToolInput({ type: "object", ...tool.parameters } as JsonObjectSchema),
          ...(readOnlyTools.has(tool.name) ? { annotations: { readOnlyHint: true } } : {}),
          meta: { "anthropic/alwaysLoad": true },
          handler: (_args, call: PiToolCall) => answer(tool.name, call),
        }),
      ),
      // A call the list no longer holds (Pi's tools changed while it was on its way) is Pi's to answer.
      { unknownTool: async (name, _args, call) => answer(name, call) },
    );
  }
}

/** Pi's tools as Claude Code is shown them, whatever their order in Pi. */
export function toolsKey(tools: readonly PiTool[]): string {
  return JSON.stringify(byName(tools).map((tool) => [tool.name, tool.description, tool.parameters]));
}

function byName(tools: readonly PiTool[]): PiTool[] {
  return [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function piToolName(claudeToolName: string): string {
  return claudeToolName.startsWith(MCP_TOOL_PREFIX)
    ? claudeToolName.slice(MCP_TOOL_PREFIX.length)
    : claudeToolName;
}
