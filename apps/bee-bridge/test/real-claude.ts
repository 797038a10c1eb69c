import type { ScriptInput } from "@bridgeworks/model-double";
import { waitTool } from "./interactive-claude.mjs";

// What the real-Claude-Code tests share: the tool names, the bridge's environment, the double's script.
// The pieces the bench needs too live in interactive-claude.mjs (plain JavaScript).
export {
  beeEnvironment,
  sessionEventTool,
  waitTool,
  writeBeeMcpConfig,
} from "./interactive-claude.mjs";

/** Names of the tools a model request offers. */
export function toolNames(body: unknown): string[] {
  return ((body as { tools?: Array<{ name: string }> }).tools ?? []).map((tool) => tool.name);
}

/** Asked to "wait for bee", the model calls the wait tool as `toolu_bee_wait`; given its result, it answers. */
export const waitThenAnswerScript: ScriptInput = {
  steps: [
    {
      match: { lastUserTextIncludes: "wait for bee" },
      response: {
        events: [
          {
            type: "tool_use",
            id: "toolu_bee_wait",
            nameFrom: { equals: waitTool },
            input: { timeoutSeconds: 30 },
          },
        ],
      },
    },
    {
      match: { toolResultFor: "toolu_bee_wait" },
      response: { events: [{ type: "text", text: "got the action" }] },
    },
  ],
};
