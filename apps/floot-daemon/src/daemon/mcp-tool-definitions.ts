import { permissionPromptTool } from "./permission-tool.js";
import { requestSecretTool } from "./request-secret-tool.js";

// The daemon's own MCP tools, apart from their server (mcp-tools.ts) so that what reads their names
// does not load the MCP SDK.

export const flootTools = [requestSecretTool, permissionPromptTool];

export const flootToolNames: readonly string[] = flootTools.map((tool) => tool.name);

/** The daemon's own MCP tools that only read (`readOnlyHint`), as the CLIs name them. */
export function flootReadOnlyToolNames(serverName = "floot"): string[] {
  return flootTools
    .filter((tool) => tool.annotations?.readOnlyHint === true)
    .map((tool) => `mcp__${serverName}__${tool.name}`);
}
