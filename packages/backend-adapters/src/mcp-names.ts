import { defaultMcpServerName, type McpSpec } from "./backend-adapter.js";

// Both CLIs build tool names as mcp__<server>__<tool> and Codex puts the server name in a TOML
// dotted key, so only characters that are safe in both are accepted.
const safeName = /^[A-Za-z0-9_-]+$/;

export function mcpServerName(spec: McpSpec): string {
  const name = spec.serverName ?? defaultMcpServerName;
  if (!safeName.test(name))
    throw new Error(`mcp.serverName must match ${safeName}, got ${JSON.stringify(name)}`);
  return name;
}

export function checkedToolNames(spec: McpSpec): string[] {
  for (const tool of spec.tools)
    if (!safeName.test(tool))
      throw new Error(`mcp.tools entry must match ${safeName}, got ${JSON.stringify(tool)}`);
  return [...spec.tools];
}

export function checkedToolTimeoutMs(spec: McpSpec): number {
  if (!Number.isInteger(spec.toolTimeoutMs) || spec.toolTimeoutMs <= 0)
    throw new Error(`mcp.toolTimeoutMs must be a positive integer, got ${spec.toolTimeoutMs}`);
  return spec.toolTimeoutMs;
}
