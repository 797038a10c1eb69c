import { permissionPromptTool, permissionPromptToolName } from "./permission-tool.js";

// The daemon's own MCP tools as data, apart from their server (mcp-tools.ts) so that what reads their
// names does not load the MCP SDK.

export const flootToolNames = ["requestSecret", permissionPromptToolName] as const;

const requestSecretTool = {
  name: "requestSecret",
  description:
    "Ask the human for a secret (a token, a password). Waits until they answer. The value is never " +
    "shown to you: the result names a file your commands can read it from while this turn lasts.",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", description: "What the secret is, as an env var name, e.g. GITHUB_TOKEN" },
      prompt: { type: "string", description: "What to tell the human, e.g. why it is needed" },
    },
    required: ["name"],
  },
  // Asking a human is an act: a replay would ask again.
  annotations: { readOnlyHint: false },
  _meta: { "anthropic/alwaysLoad": true },
};

export const flootTools = [requestSecretTool, permissionPromptTool];

/** The daemon's own MCP tools that only read (`readOnlyHint`), as the CLIs name them. */
export function flootReadOnlyToolNames(serverName = "floot"): string[] {
  return flootTools
    .filter((tool) => tool.annotations.readOnlyHint)
    .map((tool) => `mcp__${serverName}__${tool.name}`);
}
