/** A tool call's arguments as Claude streamed them (`input_json_delta`s), read for Pi. */
export type ToolArguments =
  | { readonly ok: true; readonly arguments: Record<string, unknown> }
  | { readonly ok: false; readonly problem: string };

/**
 * Pi runs a tool with an arguments object. A tool without input streams no JSON at all (that is `{}`);
 * anything else that is not a JSON object is refused with the problem named (Claude Code answers
 * unparseable JSON itself with an `InputValidationError`, and spreads an array into an object, so a
 * guess here would run a call nobody asked for).
 */
export function parseToolArguments(json: string): ToolArguments {
  if (json.trim() === "") return { ok: true, arguments: {} };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { ok: false, problem: `its arguments are not valid JSON (${json.length} characters)` };
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    return { ok: true, arguments: value as Record<string, unknown> };
  }
  const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
  return { ok: false, problem: `its arguments are ${kind}, not a JSON object` };
}

/** What Claude is answered for a call whose arguments were refused. */
export function refusedCallText(id: string, name: string, problem: string): string {
  return `Tool call ${id} (${name}) was not run: ${problem}. Call the tool again with a JSON object of arguments.`;
}
