import type { MatchableRequest, ScriptInput } from "@bridgeworks/model-double";
import type { Backend } from "@bridgeworks/protocol";

/** Each torture turn's tool calls append their label to this file in the session's workspace. */
export const effectsFileName = "effects.log";
export const callLabels = ["call1", "call2"] as const;
export type CallLabel = (typeof callLabels)[number];
export const tortureMarker = "[torture]";

/** The shell command the model runs for `label`: one line appended to the effects file. */
export function effectCommand(label: CallLabel): string {
  return `echo ${label} >> ${effectsFileName}`;
}

/**
 * One torture turn, whatever its session: some thinking and then call1, after call1's result call2,
 * after call2's result a final text. A replay of the turn asks again from the start (call1), so an
 * effect a crash let through unrecorded would show as a second line.
 */
export function tortureScript(backend: Backend): ScriptInput {
  const tool = { equals: backend === "claude" ? "Bash" : "exec_command" };
  const call = (label: CallLabel) => ({
    type: "tool_use" as const,
    nameFrom: tool,
    input:
      backend === "claude"
        ? { command: effectCommand(label), description: `record ${label}` }
        : { cmd: effectCommand(label) },
  });
  return {
    steps: [
      {
        match: { lastUserTextIncludes: tortureMarker },
        repeat: true,
        response: {
          // No text before the first call: until it runs, the turn has no effect and a crash
          // replays it, the case where an unrecorded effect would run twice.
          events: [
            { type: "thinking", thinking: "Planning the two steps, one at a time.", chunks: 4 },
            { type: "delay", ms: 30 },
            call("call1"),
          ],
        },
      },
      {
        match: (request) => lastResultLabel(request) === "call1",
        repeat: true,
        response: { events: [{ type: "text", text: "Now the second.", chunks: 2 }, call("call2")] },
      },
      {
        match: (request) => lastResultLabel(request) === "call2",
        repeat: true,
        response: { events: [{ type: "text", text: "All done.", chunks: 2 }] },
      },
    ],
  };
}

/** The label of the tool call whose result is the request's last item, if it is one of ours. */
function lastResultLabel(request: MatchableRequest): CallLabel | undefined {
  const body = request.body as { messages?: unknown[]; input?: unknown[] } | undefined;
  const items = body?.messages ?? body?.input ?? [];
  const last = items.at(-1) as Record<string, unknown> | undefined;
  if (last === undefined) return undefined;
  const resultId =
    last.type === "function_call_output"
      ? String(last.call_id)
      : (Array.isArray(last.content) ? (last.content as Record<string, unknown>[]) : []).find(
          (block) => block.type === "tool_result",
        )?.tool_use_id;
  if (typeof resultId !== "string") return undefined;
  const call = JSON.stringify(
    items.find((item) => {
      const entry = item as Record<string, unknown>;
      if (entry.type === "function_call") return entry.call_id === resultId;
      return (
        Array.isArray(entry.content) &&
        (entry.content as Record<string, unknown>[]).some((block) => block.id === resultId)
      );
    }),
  );
  return callLabels.findLast((label) => call?.includes(`echo ${label}`));
}
