import { describeIssues } from "@bridgeworks/protocol";
import type { z } from "zod";

/** One block of a tool result: text, or an image (base64 `data`) such as Pi's tools return. */
export type McpToolContent =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string };

/** An MCP `tools/call` result as our servers answer it: text for the model, JSON for a client that reads it. */
export interface McpToolResult {
  [key: string]: unknown;
  content: McpToolContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A refusal or failure the model reads: `isError` with one line saying what is wrong. */
export function mcpErrorResult(text: string): McpToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/** A value as `structuredContent` and the same JSON as text (the model reads the text). */
export function mcpJsonResult(value: object): McpToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(value) }],
    structuredContent: value as Record<string, unknown>,
  };
}

export type ArgumentsResult<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * A tool call's arguments against their schema. JSON null counts as absent; nothing is coerced
 * (`"30"` is not a number); a refusal names every offending argument: `timeoutSeconds: must be at most 60`.
 */
export function parseToolArguments<Schema extends z.ZodType>(
  schema: Schema,
  raw: unknown,
): ArgumentsResult<z.output<Schema>> {
  const input = raw === undefined || raw === null ? {} : raw;
  if (typeof input !== "object" || Array.isArray(input)) {
    return { ok: false, message: "arguments: must be a JSON object" };
  }
  const withoutNulls = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null));
  const parsed = schema.safeParse(withoutNulls, { reportInput: true });
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    message: describeIssues(parsed.error.issues, {
      root: "arguments",
      unknownKey: "is not an argument of this tool",
    }),
  };
}
