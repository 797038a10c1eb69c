import { issueProblems } from "@bridgeworks/protocol";
import { z } from "zod";
import type { MatchableRequest } from "./recorded.js";

/** Which wire API a request arrived on. */
export const ApiName = z.enum(["anthropic", "openai"]);
export type ApiName = z.infer<typeof ApiName>;

const nonNegativeInt = z.number().int().nonnegative();
const chunkCount = z.number().int().positive();

/** Picks a tool from the request's `tools[]`; every given condition must hold. */
export const ToolNameSelector = z
  .strictObject({
    equals: z.string().min(1).optional(),
    endsWith: z.string().min(1).optional(),
    includes: z.string().min(1).optional(),
  })
  .refine((selector) => Object.values(selector).some((value) => value !== undefined), {
    message: "nameFrom needs at least one of equals, endsWith, includes",
  });
export type ToolNameSelector = z.infer<typeof ToolNameSelector>;

export const TextEvent = z.strictObject({
  type: z.literal("text"),
  text: z.string(),
  /** How many deltas the text is streamed in (default 3, fewer for short text). */
  chunks: chunkCount.optional(),
  /** A pause between the text's deltas, inside its one block (a message arriving slowly). */
  deltaDelayMs: nonNegativeInt.optional(),
});

export const ThinkingEvent = z.strictObject({
  type: z.literal("thinking"),
  thinking: z.string(),
  /** Anthropic `signature` / OpenAI `encrypted_content`; a fixed placeholder when absent. */
  signature: z.string().optional(),
  chunks: chunkCount.optional(),
});

export const ToolUseEvent = z
  .strictObject({
    type: z.literal("tool_use"),
    /** `toolu_…` (anthropic) or `call_…` (openai) is generated when absent. */
    id: z.string().min(1).optional(),
    name: z.string().min(1).optional(),
    /** OpenAI only: emit the namespace form codex uses for MCP tools. */
    namespace: z.string().min(1).optional(),
    nameFrom: ToolNameSelector.optional(),
    input: z.record(z.string(), z.unknown()),
    /**
     * The arguments exactly as streamed (`input_json_delta`s / arguments deltas) instead of `input`
     * serialized: lets a script send JSON a client has to refuse. `input` is still what is recorded.
     */
    inputJson: z.string().optional(),
    /** How many `input_json_delta` / arguments deltas carry the input (default 3). */
    chunks: chunkCount.optional(),
  })
  .superRefine((event, context) => {
    if ((event.name === undefined) === (event.nameFrom === undefined)) {
      context.addIssue({ code: "custom", path: ["name"], message: "give exactly one of name or nameFrom" });
    }
    if (event.namespace !== undefined && event.nameFrom !== undefined) {
      context.addIssue({
        code: "custom",
        path: ["namespace"],
        message: "namespace comes from the resolved tool when nameFrom is used",
      });
    }
  });

export const DelayEvent = z.strictObject({ type: z.literal("delay"), ms: nonNegativeInt });

/** Holds the stream open without sending anything, until `ms` passes or the double closes. */
export const StallEvent = z.strictObject({ type: z.literal("stall"), ms: nonNegativeInt.optional() });

/** Destroys the socket: the client sees the stream cut mid-message. */
export const DropEvent = z.strictObject({ type: z.literal("drop") });

export const ScriptEvent = z.discriminatedUnion("type", [
  TextEvent,
  ThinkingEvent,
  ToolUseEvent,
  DelayEvent,
  StallEvent,
  DropEvent,
]);
export type ScriptEvent = z.infer<typeof ScriptEvent>;

export const StopReason = z.enum([
  "end_turn",
  "tool_use",
  "max_tokens",
  "stop_sequence",
  "pause_turn",
  "refusal",
]);
export type StopReason = z.infer<typeof StopReason>;

export const ScriptUsage = z.strictObject({
  input_tokens: nonNegativeInt,
  output_tokens: nonNegativeInt,
  cache_read_input_tokens: nonNegativeInt.optional(),
  cache_creation_input_tokens: nonNegativeInt.optional(),
});
export type ScriptUsage = z.infer<typeof ScriptUsage>;

export const ScriptError = z.strictObject({
  status: z.number().int().min(400).max(599),
  message: z.string(),
  /** Overrides the error type derived from the status (e.g. `overloaded_error`). */
  type: z.string().min(1).optional(),
  /** Seconds, sent as the `retry-after` header. */
  retryAfter: nonNegativeInt.optional(),
});
export type ScriptError = z.infer<typeof ScriptError>;

export const StepResponse = z
  .strictObject({
    events: z.array(ScriptEvent).optional(),
    stopReason: StopReason.optional(),
    usage: ScriptUsage.optional(),
    error: ScriptError.optional(),
    /** Extra response headers, on answers and errors alike (e.g. `anthropic-ratelimit-unified-*`). */
    headers: z
      .record(z.string().regex(/^[a-z0-9-]+$/, "header names are lower-case tokens"), z.string())
      .optional(),
  })
  .superRefine((response, context) => {
    if ((response.events === undefined) === (response.error === undefined)) {
      context.addIssue({ code: "custom", path: ["events"], message: "give exactly one of events or error" });
    }
    if (response.error !== undefined && (response.stopReason !== undefined || response.usage !== undefined)) {
      context.addIssue({
        code: "custom",
        path: ["error"],
        message: "an error response takes no stopReason or usage",
      });
    }
  });
export type StepResponse = z.infer<typeof StepResponse>;

/** Declarative conditions; every given condition must hold. */
export const MatchSpec = z
  .strictObject({
    /** The request carries a tool_result / function_call_output for this tool_use id or call_id. */
    toolResultFor: z.string().min(1).optional(),
    /** The request's last item is a user message whose text contains this marker. */
    lastUserTextIncludes: z.string().min(1).optional(),
    api: ApiName.optional(),
  })
  .refine((spec) => Object.values(spec).some((value) => value !== undefined), {
    message: "match needs at least one of toolResultFor, lastUserTextIncludes, api",
  });
export type MatchSpec = z.infer<typeof MatchSpec>;

/** Programmatic matching (not expressible in a JSON script). */
export type RequestPredicate = (request: MatchableRequest) => boolean;

const RequestPredicateSchema = z.custom<RequestPredicate>((value) => typeof value === "function", {
  message: "match must be an object (or a function in the programmatic API)",
});

export const ScriptStep = z.strictObject({
  /** Without `match` a step is positional: consumed in order by requests no matching step claims. */
  match: z.union([MatchSpec, RequestPredicateSchema]).optional(),
  /** Match any number of times instead of once. */
  repeat: z.boolean().optional(),
  response: StepResponse,
});
export type ScriptStep = z.infer<typeof ScriptStep>;

/**
 * Models Anthropic's prompt cache with a lifetime (`prompt-cache.ts`): answers whose step gives no
 * `usage` report the cache read and write the model computes instead of none.
 */
export const PromptCacheSpec = z.strictObject({
  /** How long a cached prefix lives after it was last written or read (the API's is 5 minutes). */
  ttlMs: z.number().int().positive(),
});
export type PromptCacheSpec = z.infer<typeof PromptCacheSpec>;

export const Script = z.strictObject({ steps: z.array(ScriptStep), promptCache: PromptCacheSpec.optional() });
export type Script = z.infer<typeof Script>;
export type ScriptInput = z.input<typeof Script>;

export class InvalidScriptError extends Error {
  override name = "InvalidScriptError";
  constructor(
    message: string,
    readonly issues: readonly string[],
  ) {
    super(message);
  }
}

/** Validates a script; the error message names every offending field, e.g. `steps[0].response.events[1].type`. */
export function parseScript(value: unknown): Script {
  const result = Script.safeParse(value);
  if (result.success) return result.data;
  const issues = issueProblems(result.error.issues, { root: "(script)" }).map(
    ({ field, problem }) => `${field}: ${problem}`,
  );
  throw new InvalidScriptError(`invalid script: ${issues.join("; ")}`, issues);
}
