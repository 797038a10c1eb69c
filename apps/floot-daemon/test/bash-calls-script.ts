import type { ScriptInput } from "@bridgeworks/model-double";

/**
 * A model double's script for Bash calls of the real `claude`: the model runs `command` on a prompt
 * holding `marker` and says `done` once it has the result. The prompt steps come first: each later
 * request carries every earlier tool result in its history, so a result step is consumed once, and the
 * first unconsumed one present is the newest call's.
 */
export function bashCallsScript(
  calls: [marker: string, id: string, command: string, done: string][],
): ScriptInput {
  return {
    steps: [
      ...calls.map(([marker, id, command]) => ({
        match: { lastUserTextIncludes: marker },
        // A retry (after a restart) asks again with the same prompt.
        repeat: true,
        response: {
          events: [
            {
              type: "tool_use" as const,
              id,
              nameFrom: { equals: "Bash" },
              input: { command, description: "run" },
            },
          ],
        },
      })),
      ...calls.map(([, id, , done], index) => ({
        match: { toolResultFor: id },
        // The last call's result may come twice: its turn may have been told of a restart first.
        repeat: index === calls.length - 1,
        response: { events: [{ type: "text" as const, text: done }] },
      })),
    ],
  };
}
