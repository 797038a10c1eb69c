import {
  ActionBody,
  ActionId,
  ActionKind,
  ActionPage,
  ActionRecipient,
  ActionResult,
  Cursor,
  SessionEventToolInput,
} from "@bridgeworks/protocol";
import { z } from "zod";

export const defaultWaitSeconds = 45;
export const maxWaitSeconds = 60;
export const defaultPostKind = "task";

// The wire contract of the bridge's MCP tools. Record shapes come from @bridgeworks/protocol.
export const WaitActionInput = z.strictObject({
  timeoutSeconds: z.int().min(1).max(maxWaitSeconds).default(defaultWaitSeconds),
  cursor: Cursor.optional(),
});
export const ListInput = z.strictObject({
  since: Cursor.optional(),
  cursor: Cursor.optional(),
  limit: z.int().min(1).max(500).optional(),
});
export const PostInput = z.strictObject({
  to: ActionRecipient,
  kind: ActionKind.default(defaultPostKind),
  body: ActionBody,
});
export const ClaimInput = z.strictObject({ actionId: ActionId });
export const ClaimNextInput = z.strictObject({});
export const CompleteInput = z.strictObject({ actionId: ActionId, result: ActionResult.optional() });
export const WhoamiInput = z.strictObject({});
export { SessionEventToolInput };

export type ArgumentsResult<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Validates tool arguments. JSON null counts as absent; nothing is coerced (`"30"` is not a number).
 * A refusal names every offending argument: `timeoutSeconds: must be at most 60`.
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
  return { ok: false, message: parsed.error.issues.map(describeIssue).join("; ") };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => `${key}: is not an argument of this tool`).join("; ");
  }
  const name = issue.path.map(String).join(".") || "arguments";
  return `${name}: ${readableMessage(issue)}`;
}

function readableMessage(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type": {
      const expected = issue.expected === "int" ? "integer" : issue.expected;
      return issue.input === undefined
        ? `is required (${expected})`
        : `must be ${article(expected)}, got ${describeValue(issue.input)}`;
    }
    case "too_small":
      return `must be at least ${String(issue.minimum)}`;
    case "too_big":
      return `must be at most ${String(issue.maximum)}`;
    default:
      return issue.message;
  }
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function describeValue(value: unknown): string {
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === "number")
    return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
  return Array.isArray(value) ? "an array" : typeof value;
}

/** A JSON Schema for `tools/list`: what the model sees, with defaults and bounds. */
export function toolInputJsonSchema(schema: z.ZodType): { type: "object"; [key: string]: unknown } {
  return withoutDialect(z.toJSONSchema(schema, { io: "input" })) as {
    type: "object";
    [key: string]: unknown;
  };
}

export function actionPageJsonSchema(): { type: "object"; [key: string]: unknown } {
  return withoutDialect(z.toJSONSchema(ActionPage, { io: "output" })) as {
    type: "object";
    [key: string]: unknown;
  };
}

// Clients validate with draft-07 validators that do not know the 2020-12 meta-schema URI.
function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}
