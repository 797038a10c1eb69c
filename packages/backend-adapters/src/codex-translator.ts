import type { BackendEvent, TurnError } from "@bridgeworks/protocol";
import { z } from "zod";
import type { ClassifyContext, StreamTranslator, TranslatedLine, TurnOutcome } from "./backend-adapter.js";
import { builtOnce } from "./built-once.js";
import type { CliExit } from "./cli-process.js";
import { describeExit, lastStderrLine } from "./exit-description.js";
import { parseJsonObject } from "./json-line.js";
import { TurnErrorCode } from "./turn-error-code.js";

export interface CodexTranslatorOptions {
  /** For error messages; default `codex`. */
  command?: string;
}

/** The `codex exec --json` line schemas, built with the first translator. */
const lineSchemas = builtOnce(() => {
  const Json = z.json();
  const Item = z.looseObject({ id: z.string(), type: z.string() });
  const CodexLine = z.discriminatedUnion("type", [
    z.looseObject({ type: z.literal("thread.started"), thread_id: z.string().min(1) }),
    z.looseObject({ type: z.literal("turn.started") }),
    // usage is parsed on its own: a shape that drifted must not cost the turn its completion.
    z.looseObject({ type: z.literal("turn.completed"), usage: z.unknown().optional() }),
    z.looseObject({ type: z.literal("turn.failed"), error: z.looseObject({ message: z.string() }) }),
    z.looseObject({ type: z.literal("error"), message: z.string() }),
    z.looseObject({ type: z.literal("item.started"), item: Item }),
    z.looseObject({ type: z.literal("item.updated"), item: Item }),
    z.looseObject({ type: z.literal("item.completed"), item: Item }),
  ]);
  const knownLineTypes = new Set<unknown>(CodexLine.options.map((option) => option.shape.type.value));
  const Usage = z.looseObject({
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
    cached_input_tokens: z.number().int().nonnegative().optional(),
    cache_write_input_tokens: z.number().int().nonnegative().optional(),
  });
  const CommandExecution = z.looseObject({
    command: z.string(),
    aggregated_output: z.string().optional(),
    exit_code: z.number().int().nullable().optional(),
    status: z.string(),
  });
  const McpToolCall = z.looseObject({
    server: z.string(),
    tool: z.string(),
    arguments: Json.optional(),
    result: z.looseObject({ content: Json.optional() }).nullable().optional(),
    error: z.looseObject({ message: z.string() }).nullable().optional(),
    status: z.string(),
  });
  const TextItem = z.looseObject({ text: z.string() });
  const MessageItem = z.looseObject({ message: z.string() });
  return {
    Json,
    Item,
    CodexLine,
    knownLineTypes,
    Usage,
    CommandExecution,
    McpToolCall,
    TextItem,
    MessageItem,
  };
});
type LineSchemas = ReturnType<typeof lineSchemas>;
type Json = z.infer<LineSchemas["Json"]>;
type Item = z.infer<LineSchemas["Item"]> & Record<string, unknown>;
type CodexLine = z.infer<LineSchemas["CodexLine"]>;

// Items that act on the world; an `item.started` of one is the tool_started effect. file_change
// arrives only as `item.completed` (measured), so its start is reported then.
const toolItemTypes = new Set([
  "command_execution",
  "mcp_tool_call",
  "file_change",
  "web_search",
  "collab_tool_call",
]);
const conversationMissing = /no rollout found for thread id/i;
const sessionInUse = /already has an active writer/i;
const rateLimited = /\b429\b|too many requests|rate.?limit/i;

/**
 * Translates `codex exec --json` lines. `thread.started` becomes `backend.started` (the thread id a
 * later turn resumes), returned from that very line. The exit is classified by `turn.completed` /
 * `turn.failed`, then by stderr (exec prints nothing on stdout when a resume cannot start).
 */
export function createCodexTranslator(options: CodexTranslatorOptions = {}): StreamTranslator {
  const command = options.command ?? "codex";
  const { CodexLine, knownLineTypes, TextItem, MessageItem } = lineSchemas();
  const startedTools = new Set<string>();
  let terminal: { completed: true } | ({ completed: false } & TurnError) | undefined;
  let lastError: TurnError | undefined;

  const toolStarted = (item: Item): BackendEvent[] => {
    if (startedTools.has(item.id)) return [];
    startedTools.add(item.id);
    return [{ type: "tool.started", toolId: item.id, name: toolName(item), input: toolInput(item) }];
  };

  const fromItem = (line: Extract<CodexLine, { type: `item.${string}` }>): BackendEvent[] => {
    const { item } = line;
    if (line.type === "item.updated") return [];
    if (toolItemTypes.has(item.type))
      return line.type === "item.started" ? toolStarted(item) : [...toolStarted(item), toolCompleted(item)];
    if (line.type === "item.started") return [];
    const text = TextItem.safeParse(item);
    if (item.type === "agent_message" && text.success)
      return [{ type: "assistant.text", text: text.data.text }];
    if (item.type === "reasoning" && text.success) return [{ type: "reasoning", text: text.data.text }];
    const message = MessageItem.safeParse(item);
    // Non-fatal by design (e.g. "Model metadata for `x` not found"): the turn goes on.
    if (item.type === "error" && message.success)
      return [{ type: "warning", code: "backend_notice", message: message.data.message }];
    return [];
  };

  const translateLine = (line: CodexLine): BackendEvent[] => {
    switch (line.type) {
      case "thread.started":
        return [{ type: "backend.started", conversationId: line.thread_id }];
      case "turn.started":
        return [];
      case "turn.completed":
        terminal = { completed: true };
        return usageOf(line.usage);
      case "turn.failed": {
        const error = { code: codeOf(line.error.message), message: readableMessage(line.error.message) };
        terminal = { completed: false, ...error };
        // exec reports the failure twice, as `error` and then `turn.failed`.
        return error.message === lastError?.message ? [] : [{ type: "error", ...error }];
      }
      case "error": {
        lastError = { code: codeOf(line.message), message: readableMessage(line.message) };
        return [{ type: "error", ...lastError }];
      }
      default:
        return fromItem(line);
    }
  };

  return {
    translate(text): TranslatedLine {
      const value = parseJsonObject(text);
      if (value === undefined) return { events: [unparsed(text)] };
      if (!knownLineTypes.has(value.type)) return { events: [] };
      const line = CodexLine.safeParse(value);
      return { events: line.success ? translateLine(line.data) : [unparsed(text)] };
    },
    classify(exit: CliExit, context: ClassifyContext): TurnOutcome {
      if (terminal?.completed) return { phase: "completed" };
      if (terminal !== undefined) return failed(terminal.code, terminal.message);
      if (context.stopRequested) return { phase: "cancelled" };
      const missing = lastStderrLine(exit.stderrTail, conversationMissing);
      if (missing !== undefined) return failed(TurnErrorCode.conversationMissing, stripErrorPrefix(missing));
      const inUse = lastStderrLine(exit.stderrTail, sessionInUse);
      if (inUse !== undefined) return failed(TurnErrorCode.sessionInUse, stripErrorPrefix(inUse));
      if (lastError !== undefined) return failed(lastError.code, lastError.message);
      return failed(TurnErrorCode.cliCrashed, `${describeExit(command, exit)} (no turn.completed)`);
    },
  };
}

function usageOf(value: unknown): BackendEvent[] {
  const parsed = lineSchemas().Usage.safeParse(value);
  if (!parsed.success) return [];
  const usage = parsed.data;
  return [
    {
      type: "usage",
      input: usage.input_tokens,
      output: usage.output_tokens,
      ...(usage.cached_input_tokens !== undefined && { cacheRead: usage.cached_input_tokens }),
      ...(usage.cache_write_input_tokens !== undefined && { cacheWrite: usage.cache_write_input_tokens }),
    },
  ];
}

function toolName(item: Item): string {
  const call = lineSchemas().McpToolCall.safeParse(item);
  if (item.type === "mcp_tool_call" && call.success) return `mcp__${call.data.server}__${call.data.tool}`;
  return item.type;
}

function toolInput(item: Item): Json {
  const { Json, McpToolCall, CommandExecution } = lineSchemas();
  const call = McpToolCall.safeParse(item);
  if (item.type === "mcp_tool_call" && call.success) return call.data.arguments ?? null;
  const execution = CommandExecution.safeParse(item);
  if (item.type === "command_execution" && execution.success) return { command: execution.data.command };
  const { id: _id, type: _type, status: _status, ...rest } = item;
  return Json.safeParse(rest).data ?? null;
}

function toolCompleted(item: Item): BackendEvent {
  const { CommandExecution, McpToolCall } = lineSchemas();
  const base = { type: "tool.completed", toolId: item.id } as const;
  const execution = CommandExecution.safeParse(item);
  if (item.type === "command_execution" && execution.success) {
    const { aggregated_output: output, exit_code: exitCode, status } = execution.data;
    return { ...base, output: output ?? "", isError: status !== "completed" || (exitCode ?? 0) !== 0 };
  }
  const call = McpToolCall.safeParse(item);
  if (item.type === "mcp_tool_call" && call.success) {
    const { result, error, status } = call.data;
    const output = error ? error.message : (result?.content ?? null);
    return { ...base, output, isError: status !== "completed" || Boolean(error) };
  }
  const status = typeof item.status === "string" ? item.status : "completed";
  return { ...base, isError: status !== "completed" };
}

/** A 4xx body arrives as the raw JSON error object; its `error.message` is what a human needs. */
function readableMessage(message: string): string {
  const error = parseJsonObject(message)?.error;
  const inner =
    typeof error === "object" && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof inner === "string" && inner !== "" ? inner : message;
}

function codeOf(message: string): string {
  return rateLimited.test(message) ? TurnErrorCode.rateLimited : TurnErrorCode.apiError;
}

function stripErrorPrefix(line: string): string {
  return line.replace(/^Error:\s*/, "");
}

function failed(code: string, message: string): TurnOutcome {
  return { phase: "failed", error: { code, message } };
}

function unparsed(text: string): BackendEvent {
  return { type: "warning", code: "unparsed_line", message: text.slice(0, 500) };
}
