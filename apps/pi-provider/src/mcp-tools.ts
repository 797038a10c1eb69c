import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { McpToolResult } from "./content.js";
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

/**
 * Pi's tools served to Claude Code as one in-process MCP server (the Agent SDK's `type: "sdk"`), with
 * their JSON Schema as is. A low-level server rather than `createSdkMcpServer`, which re-derives the
 * schemas through zod and reads no `_meta`.
 */
export class PiToolServer {
  readonly server: Server;
  private tools: PiTool[] = [];
  private toolsKey = "";

  constructor(onCall: ToolCallHandler) {
    this.server = new Server(
      { name: MCP_SERVER_NAME, version: piProviderVersion },
      { capabilities: { tools: { listChanged: true } } },
    );
    this.server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: this.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: { type: "object", ...tool.parameters } as { type: "object" },
        ...(readOnlyTools.has(tool.name) ? { annotations: { readOnlyHint: true } } : {}),
        _meta: { "anthropic/alwaysLoad": true },
      })),
    }));
    this.server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const toolUseId = request.params._meta?.[TOOL_USE_ID_META];
      return onCall({
        toolUseId: typeof toolUseId === "string" ? toolUseId : undefined,
        name: request.params.name,
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
    this.tools = byName(tools);
    this.toolsKey = key;
    if (wasSet) this.server.sendToolListChanged().catch(() => {});
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
