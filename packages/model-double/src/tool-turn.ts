import type { z } from "zod";
import type { ScriptInput, ScriptStep, ToolUseEvent } from "./script.js";

/** One scripted tool call: a `tool_use` event with the id its result comes back under. */
export type ScriptedToolCall = Omit<z.input<typeof ToolUseEvent>, "type" | "id"> & { id: string };

/**
 * The script of one agentic turn: the model calls `calls` one after another, each once the result of
 * the one before has come back, and answers `answer` once the last result is back. Later steps are
 * listed first, so a request that carries every earlier result picks the step after the latest one.
 */
export function toolTurnScript(calls: readonly ScriptedToolCall[], answer: string): ScriptInput {
  const steps: ScriptInput["steps"] = [];
  let previous: string | undefined;
  const after = () => (previous === undefined ? {} : { match: { toolResultFor: previous } });
  for (const call of calls) {
    steps.unshift({ ...after(), response: { events: [{ type: "tool_use", ...call }] } });
    previous = call.id;
  }
  steps.unshift({ ...after(), response: { events: [{ type: "text", text: answer }] } });
  return { steps };
}

/**
 * The most common step: a request whose last user text includes `includes` is answered with `text`
 * (once, unless `repeat`).
 */
export function textReply(
  includes: string,
  text: string,
  options: { repeat?: boolean } = {},
): z.input<typeof ScriptStep> {
  return {
    match: { lastUserTextIncludes: includes },
    ...(options.repeat && { repeat: true }),
    response: { events: [{ type: "text", text }] },
  };
}
