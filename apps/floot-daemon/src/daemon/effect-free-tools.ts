import { claudeEffectFreeTools, codexEffectFreeTools } from "@bridgeworks/backend-adapters";
import type { Backend, BackendEvent, FlootSessionOptions } from "@bridgeworks/protocol";
import { flootReadOnlyToolNames } from "./mcp-tool-definitions.js";

/**
 * Which tool calls are no effect, as data: each backend's read-only tools (from its adapter) and the
 * daemon's own MCP tools marked `readOnlyHint`; a session's `effectFreeTools` replaces the list.
 */
export const defaultEffectFreeTools: Readonly<Record<Backend, readonly string[]>> = {
  claude: [...claudeEffectFreeTools, ...flootReadOnlyToolNames()],
  codex: [...codexEffectFreeTools, ...flootReadOnlyToolNames()],
};

export function effectFreeToolsOf(backend: Backend, options: FlootSessionOptions): readonly string[] {
  return options.effectFreeTools ?? defaultEffectFreeTools[backend];
}

/** A stream's tool start of a tool the session declared effect-free proves no effect. */
export function markEffectFree(event: BackendEvent, effectFree: ReadonlySet<string>): BackendEvent {
  return event.type === "tool.started" && effectFree.has(event.name) ? { ...event, effectFree: true } : event;
}
