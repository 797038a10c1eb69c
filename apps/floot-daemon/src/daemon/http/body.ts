import type { IncomingMessage } from "node:http";
import { issueProblems } from "@bridgeworks/protocol";
import type { z } from "zod";
import { ApiError } from "./api-error.js";

const maxBodyBytes = 1024 * 1024;

/** A JSON body (at most 1 MiB) against its protocol schema; a refusal names the field. */
export async function readBody<T>(request: IncomingMessage, schema: z.ZodType<T>): Promise<T> {
  const type = request.headers["content-type"] ?? "";
  if (!/^application\/json\b/i.test(type)) {
    throw new ApiError("unsupported_media_type", "the body must be application/json");
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) throw new ApiError("payload_too_large", "the body must be at most 1 MiB");
    chunks.push(chunk as Buffer);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new ApiError("invalid_body", "the body is not valid JSON");
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = issueProblems(parsed.error.issues, { root: "body" });
  const message = problems.map(({ field, problem }) => `${field}: ${problem}`).join("; ");
  const field = problems[0]?.field;
  throw new ApiError("invalid_body", message, field !== undefined && field !== "body" ? { field } : {});
}

/** `?name=N`: a non-negative integer, or undefined when absent. */
export function indexParam(request: IncomingMessage, name: string): number | undefined {
  const raw = new URL(request.url ?? "/", "http://x").searchParams.get(name);
  if (raw === null) return undefined;
  return parseIndex(raw, name);
}

export function parseIndex(raw: string, name: string, problem = "must be a non-negative integer"): number {
  if (!/^\d{1,9}$/.test(raw)) throw new ApiError("bad_request", `${name}: ${problem}`, { field: name });
  return Number(raw);
}
