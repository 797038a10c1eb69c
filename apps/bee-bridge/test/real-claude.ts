import { join } from "node:path";
import type { ScriptInput } from "@bridgeworks/model-double";

// What the real-Claude-Code tests share: the tool names, the bridge's environment, the double's script.

export const waitTool = "mcp__bee__bee_wait_action";
export const sessionEventTool = "mcp__bee__bee_session_event";

/** Names of the tools a model request offers. */
export function toolNames(body: unknown): string[] {
  return ((body as { tools?: Array<{ name: string }> }).tools ?? []).map((tool) => tool.name);
}

/** The bridge's environment inside an isolated environment rooted at `root`, as agent `alpha`. */
export function beeEnvironment(root: string) {
  return {
    BEE_BOARD: join(root, "board.db"),
    BEE_RUN_DIR: join(root, "run"),
    BEE_AGENT: "alpha",
    BEE_LOG_LEVEL: "debug",
    BEE_LOG_FILE: join(root, "bridge.log"),
  };
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
