import type { BackendEvent, TurnError } from "@bridgeworks/protocol";
import { z } from "zod";
import type { ClassifyContext, StreamTranslator, TranslatedLine, TurnOutcome } from "./backend-adapter.js";
import { builtOnce } from "./built-once.js";
import type { CliExit } from "./cli-process.js";
import { describeExit, lastStderrLine } from "./exit-description.js";
import { parseJsonObject } from "./json-line.js";
import { TurnErrorCode } from "./turn-error-code.js";

export interface ClaudeTranslatorOptions {
  /** The MCP server the turn mounted: `system/init` must not report it failed. */
  mcpServerName?: string;
  /** For error messages; default `claude`. */
  command?: string;
}

/** The stream-json line schemas, built with the first translator. */
const lineSchemas = builtOnce(() => {
  const Json = z.json();

  const ContentBlock = z.looseObject({
    type: z.string(),
    text: z.string().optional(),
    thinking: z.string().optional(),
    id: z.string().optional(),
    name: z.string().optional(),
    input: Json.optional(),
    tool_use_id: z.string().optional(),
    content: Json.optional(),
    is_error: z.boolean().optional(),
  });

  const Usage = z.looseObject({
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
    cache_read_input_tokens: z.number().int().nonnegative().optional(),
    cache_creation_input_tokens: z.number().int().nonnegative().optional(),
  });

  const ClaudeLine = z.discriminatedUnion("type", [
    z.looseObject({
      type: z.literal("system"),
      subtype: z.string(),
      session_id: z.string().optional(),
      mcp_servers: z.array(z.looseObject({ name: z.string(), status: z.string() })).optional(),
      attempt: z.number().optional(),
      max_retries: z.number().optional(),
      error_status: z.number().nullable().optional(),
      error: z.string().nullable().optional(),
    }),
    z.looseObject({
      type: z.literal("stream_event"),
      event: z.looseObject({
        type: z.string(),
        delta: z.looseObject({ type: z.string().optional(), text: z.string().optional() }).optional(),
      }),
    }),
    z.looseObject({
      type: z.literal("assistant"),
      message: z.looseObject({
        model: z.string().optional(),
        content: z.array(ContentBlock),
        usage: z.unknown().optional(),
      }),
      error: z.string().optional(),
      is_api_error_message: z.boolean().optional(),
    }),
    z.looseObject({
      type: z.literal("user"),
      message: z.looseObject({ content: z.union([z.string(), z.array(ContentBlock)]) }),
    }),
    z.looseObject({
      type: z.literal("result"),
      is_error: z.boolean(),
      result: z.string().nullable().optional(),
      terminal_reason: z.string().nullable().optional(),
      api_error_status: z.number().nullable().optional(),
      errors: z.array(z.string()).optional(),
      // Parsed on its own: a usage shape that drifted must not cost the turn its result.
      usage: z.unknown().optional(),
      total_cost_usd: z.unknown().optional(),
      modelUsage: z.unknown().optional(),
    }),
  ]);
  const Cost = z.number().nonnegative();
  const knownLineTypes = new Set<unknown>(ClaudeLine.options.map((option) => option.shape.type.value));
  // The `result` line's per-model figures; only the context window is read.
  const ModelUsage = z.record(
    z.string(),
    z.looseObject({ contextWindow: z.number().int().positive().optional() }),
  );
  return { ContentBlock, Usage, Cost, ModelUsage, ClaudeLine, knownLineTypes };
});
type LineSchemas = ReturnType<typeof lineSchemas>;
type ContentBlock = z.infer<LineSchemas["ContentBlock"]>;
type ClaudeLine = z.infer<LineSchemas["ClaudeLine"]>;
type LineOf<T extends ClaudeLine["type"]> = Extract<ClaudeLine, { type: T }>;

// Claude Code marks messages it wrote itself (API errors, "No response requested.") with this model.
const syntheticModel = "<synthetic>";
const conversationMissing = /No conversation found with session ID/;
const sessionInUse = /Session ID \S+ is already in use/;
// A server that is still connecting is not a failure; these are.
const unusableMcpStatuses = new Set(["failed", "needs-auth", "disabled"]);

/**
 * Translates `claude -p --output-format stream-json --verbose` lines. Assistant text is an effect
 * unless Claude Code wrote it itself (`<synthetic>`); a tool_use block is a tool start. The exit is
 * classified by the `result` line's `is_error` and `terminal_reason` (never `subtype`), then stderr.
 */
export function createClaudeTranslator(options: ClaudeTranslatorOptions = {}): StreamTranslator {
  const command = options.command ?? "claude";
  const { ClaudeLine, knownLineTypes } = lineSchemas();
  let result: LineOf<"result"> | undefined;
  let lastRequest: ContextAtRequest | undefined;

  const translateLine = (line: ClaudeLine): TranslatedLine => {
    switch (line.type) {
      case "system":
        return fromSystem(line, options.mcpServerName);
      case "stream_event":
        return events(...fromStreamEvent(line));
      case "assistant":
        if (line.message.model === syntheticModel) return events(fromSyntheticMessage(line));
        lastRequest = contextAt(line) ?? lastRequest;
        return events(...line.message.content.flatMap(fromAssistantBlock));
      case "user":
        return typeof line.message.content === "string"
          ? events()
          : events(...line.message.content.flatMap(fromToolResult));
      case "result":
        result = line;
        return events(...usageOf(line, lastRequest));
    }
  };

  return {
    translate(text) {
      const value = parseJsonObject(text);
      if (value === undefined) return unparsed(text);
      // Lines this adapter has no use for (rate_limit_event, ...) are not errors.
      if (!knownLineTypes.has(value.type)) return events();
      const line = ClaudeLine.safeParse(value);
      return line.success ? translateLine(line.data) : unparsed(text);
    },
    classify(exit: CliExit, context: ClassifyContext): TurnOutcome {
      if (result !== undefined) return outcomeOfResult(result, describeExit(command, exit));
      if (context.stopRequested) return { phase: "cancelled" };
      const missing = lastStderrLine(exit.stderrTail, conversationMissing);
      if (missing !== undefined) return failed(TurnErrorCode.conversationMissing, missing);
      const inUse = lastStderrLine(exit.stderrTail, sessionInUse);
      if (inUse !== undefined) return failed(TurnErrorCode.sessionInUse, inUse.replace(/^Error:\s*/, ""));
      return failed(TurnErrorCode.cliCrashed, `${describeExit(command, exit)} (no result line)`);
    },
  };
}

function fromSystem(line: LineOf<"system">, mcpServerName: string | undefined): TranslatedLine {
  if (line.subtype === "init") return fromInit(line, mcpServerName);
  if (line.subtype !== "api_retry") return events();
  const attempt =
    line.attempt === undefined ? "" : ` (attempt ${line.attempt} of ${line.max_retries ?? "?"})`;
  return events({
    type: "warning",
    code: "api_retry",
    message:
      `retrying after API error ${line.error_status ?? ""} ${line.error ?? ""}`.replace(/\s+/g, " ").trim() +
      attempt,
  });
}

function fromStreamEvent(line: LineOf<"stream_event">): BackendEvent[] {
  const { delta } = line.event;
  if (line.event.type !== "content_block_delta" || delta?.type !== "text_delta" || !delta.text) return [];
  return [{ type: "assistant.delta", text: delta.text }];
}

function fromInit(line: LineOf<"system">, mcpServerName: string | undefined): TranslatedLine {
  const started: BackendEvent[] =
    line.session_id === undefined ? [] : [{ type: "backend.started", conversationId: line.session_id }];
  if (mcpServerName === undefined) return { events: started };
  const server = line.mcp_servers?.find((entry) => entry.name === mcpServerName);
  if (server !== undefined && !unusableMcpStatuses.has(server.status)) return { events: started };
  const error: TurnError = {
    code: TurnErrorCode.bridgeUnavailable,
    message:
      server === undefined
        ? `MCP server "${mcpServerName}" is missing from Claude Code's init`
        : `MCP server "${mcpServerName}" is ${server.status}`,
  };
  return { events: [...started, { type: "error", ...error }], abort: error };
}

function fromAssistantBlock(block: ContentBlock): BackendEvent[] {
  if (block.type === "text" && block.text) return [{ type: "assistant.text", text: block.text }];
  if (block.type === "thinking" && block.thinking) return [{ type: "reasoning", text: block.thinking }];
  if (block.type === "tool_use" && block.id && block.name)
    return [{ type: "tool.started", toolId: block.id, name: block.name, input: block.input ?? null }];
  return [];
}

function fromSyntheticMessage(line: LineOf<"assistant">): BackendEvent {
  const text = line.message.content.map((block) => block.text ?? "").join("");
  if (line.is_api_error_message === true || line.error !== undefined)
    return {
      type: "error",
      code: line.error === "rate_limit" ? TurnErrorCode.rateLimited : TurnErrorCode.apiError,
      message: text,
    };
  return { type: "warning", code: "synthetic_message", message: text };
}

function fromToolResult(block: ContentBlock): BackendEvent[] {
  if (block.type !== "tool_result" || !block.tool_use_id) return [];
  return [
    {
      type: "tool.completed",
      toolId: block.tool_use_id,
      ...(block.content !== undefined && { output: block.content }),
      isError: block.is_error === true,
    },
  ];
}

/** What an assistant message's request held: its model, and its input (cached or not) plus output. */
interface ContextAtRequest {
  model: string | undefined;
  tokens: number;
}

function contextAt(line: LineOf<"assistant">): ContextAtRequest | undefined {
  const parsed = lineSchemas().Usage.safeParse(line.message.usage);
  if (!parsed.success) return undefined;
  const usage = parsed.data;
  const tokens =
    usage.input_tokens +
    (usage.cache_read_input_tokens ?? 0) +
    (usage.cache_creation_input_tokens ?? 0) +
    usage.output_tokens;
  return { model: line.message.model, tokens };
}

/** The last request's model's window, else the largest the line names. */
function contextWindowOf(line: LineOf<"result">, model: string | undefined): number | undefined {
  const parsed = lineSchemas().ModelUsage.safeParse(line.modelUsage);
  if (!parsed.success) return undefined;
  const ofModel = model === undefined ? undefined : parsed.data[model]?.contextWindow;
  const windows = Object.values(parsed.data).flatMap((each) =>
    each.contextWindow ? [each.contextWindow] : [],
  );
  return ofModel ?? (windows.length > 0 ? Math.max(...windows) : undefined);
}

function usageOf(line: LineOf<"result">, lastRequest: ContextAtRequest | undefined): BackendEvent[] {
  const { Usage, Cost } = lineSchemas();
  const parsed = Usage.safeParse(line.usage);
  if (!parsed.success) return [];
  const usage = parsed.data;
  const cost = Cost.safeParse(line.total_cost_usd);
  const contextWindow = contextWindowOf(line, lastRequest?.model);
  return [
    {
      type: "usage",
      input: usage.input_tokens,
      output: usage.output_tokens,
      ...(usage.cache_read_input_tokens !== undefined && { cacheRead: usage.cache_read_input_tokens }),
      ...(usage.cache_creation_input_tokens !== undefined && {
        cacheWrite: usage.cache_creation_input_tokens,
      }),
      ...(cost.success && { costUsd: cost.data }),
      ...(lastRequest !== undefined && { contextUsed: lastRequest.tokens }),
      ...(contextWindow !== undefined && { contextWindow }),
    },
  ];
}

function outcomeOfResult(result: LineOf<"result">, exitDescription: string): TurnOutcome {
  if (!result.is_error) return { phase: "completed" };
  const message =
    (result.result || undefined) ??
    (result.errors?.length ? result.errors.join("\n") : undefined) ??
    exitDescription;
  if (conversationMissing.test(message)) return failed(TurnErrorCode.conversationMissing, message);
  if (result.terminal_reason === "api_error")
    return failed(
      result.api_error_status === 429 ? TurnErrorCode.rateLimited : TurnErrorCode.apiError,
      message,
    );
  return failed(result.terminal_reason ?? "cli_error", message);
}

function failed(code: string, message: string): TurnOutcome {
  return { phase: "failed", error: { code, message } };
}

function events(...list: BackendEvent[]): TranslatedLine {
  return { events: list };
}

function unparsed(text: string): TranslatedLine {
  return events({ type: "warning", code: "unparsed_line", message: text.slice(0, 500) });
}
