import type { z } from "zod";

/** The dotted paths a failed parse names, so tests can assert that a message names the field. */
export function failedPaths(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  if (result.success) return [];
  return result.error.issues.map((issue) => issue.path.join("."));
}

export function firstMessage(schema: z.ZodType, value: unknown): string {
  const result = schema.safeParse(value);
  if (result.success) throw new Error("expected the schema to refuse the value");
  return result.error.issues[0]!.message;
}
