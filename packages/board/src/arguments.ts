import { argumentError } from "./errors.js";

/** The part of a zod schema this module uses; the schemas themselves live in `@bridgeworks/protocol`. */
export interface Schema<T> {
  safeParse(
    value: unknown,
  ):
    | { success: true; data: T }
    | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
}

/**
 * Parses one argument, turning a refusal into a `BoardError` that names it. A refusal inside an
 * object names the field (`to`, not `draft.to`), which is what the caller typed.
 */
export function parseArgument<T>(schema: Schema<T>, value: unknown, argument: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = issue === undefined || issue.path.length === 0 ? argument : issue.path.map(String).join(".");
  throw argumentError(name, issue?.message ?? "is invalid");
}

export function parseIntegerArgument(value: unknown, argument: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw argumentError(argument, `must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}

export function parseOptionalSignal(value: unknown, argument: string): AbortSignal | undefined {
  if (value === undefined || value instanceof AbortSignal) return value;
  throw argumentError(argument, `must be an AbortSignal, got ${describe(value)}`);
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null || typeof value !== "object") return String(value);
  return Array.isArray(value) ? "an array" : "an object";
}
