import type { CacheUsage } from "./prompt-cache.js";
import type { RecordedToolCall } from "./recorded.js";
import { estimateTokens, type OfferedTool, offeredTools, requestedModel } from "./request-view.js";
import type { ApiName, ScriptEvent, StepResponse, StopReason, ToolNameSelector } from "./script.js";

/** Makes ids such as `toolu_…`, `call_…`, `msg_…`; injectable so tests can pin them. */
export type IdGenerator = (prefix: string) => string;

export type PlannedBlock =
  | { kind: "text"; text: string; deltas: string[]; deltaDelayMs?: number }
  | { kind: "thinking"; thinking: string; signature: string; deltas: string[] }
  | {
      kind: "tool_call";
      id: string;
      name: string;
      namespace?: string;
      input: Record<string, unknown>;
      deltas: string[];
    };

export type PlannedPause = { kind: "delay"; ms: number } | { kind: "stall"; ms?: number } | { kind: "drop" };

export type PlanItem = PlannedBlock | PlannedPause;

export interface PlannedUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** A scripted answer with every id, tool name and count settled, ready to render for either API. */
export interface AnswerPlan {
  messageId: string;
  model: string;
  items: PlanItem[];
  stopReason: StopReason;
  usage: PlannedUsage;
}

export type PlanOutcome = { ok: true; plan: AnswerPlan } | { ok: false; failure: string };

const defaultChunkCount = 3;
const placeholderSignature = "model-double-signature";

export function planAnswer(
  response: StepResponse & { events: ScriptEvent[] },
  context: {
    api: ApiName;
    body: unknown;
    requestIndex: number;
    generateId: IdGenerator;
    /** The prompt-cache model's account of this request, when the script models the cache. */
    cache?: CacheUsage | undefined;
  },
): PlanOutcome {
  const tools = offeredTools(context.body);
  const items: PlanItem[] = [];
  for (const event of response.events) {
    if (event.type !== "tool_use") {
      items.push(planEvent(event));
      continue;
    }
    const resolved = resolveToolName(event, tools, context.api);
    if (!resolved) {
      return {
        ok: false,
        failure: `model-double: nameFrom ${JSON.stringify(event.nameFrom)} matched no tool in request #${context.requestIndex}`,
      };
    }
    const id = event.id ?? context.generateId(context.api === "anthropic" ? "toolu_" : "call_");
    items.push({
      kind: "tool_call",
      id,
      ...resolved,
      input: event.input,
      deltas: splitIntoChunks(
        event.inputJson ?? JSON.stringify(event.input),
        event.chunks ?? defaultChunkCount,
      ),
    });
  }
  const hasToolCall = items.some((item) => item.kind === "tool_call");
  return {
    ok: true,
    plan: {
      messageId: context.generateId(context.api === "anthropic" ? "msg_" : "resp_"),
      model: requestedModel(context.body) ?? "model-double",
      items,
      stopReason: response.stopReason ?? (hasToolCall ? "tool_use" : "end_turn"),
      usage: planUsage(response, items, context.body, context.cache),
    },
  };
}

function planEvent(event: Exclude<ScriptEvent, { type: "tool_use" }>): PlanItem {
  switch (event.type) {
    case "text":
      return {
        kind: "text",
        text: event.text,
        deltas: splitIntoChunks(event.text, event.chunks ?? defaultChunkCount),
        ...(event.deltaDelayMs !== undefined && { deltaDelayMs: event.deltaDelayMs }),
      };
    case "thinking":
      return {
        kind: "thinking",
        thinking: event.thinking,
        signature: event.signature ?? placeholderSignature,
        deltas: splitIntoChunks(event.thinking, event.chunks ?? defaultChunkCount),
      };
    case "delay":
      return { kind: "delay", ms: event.ms };
    case "stall":
      return event.ms === undefined ? { kind: "stall" } : { kind: "stall", ms: event.ms };
    case "drop":
      return { kind: "drop" };
  }
}

function resolveToolName(
  event: Extract<ScriptEvent, { type: "tool_use" }>,
  tools: readonly OfferedTool[],
  api: ApiName,
): { name: string; namespace?: string } | undefined {
  if (event.name !== undefined) {
    return api === "openai" && event.namespace !== undefined
      ? { name: event.name, namespace: event.namespace }
      : { name: event.name };
  }
  const tool = tools.find((candidate) => selects(event.nameFrom!, candidate.qualifiedName));
  if (!tool) return undefined;
  // Claude sees MCP tools as flat `mcp__server__tool` names; codex needs the namespace form.
  if (api === "openai" && tool.namespace !== undefined) return { name: tool.name, namespace: tool.namespace };
  return { name: tool.qualifiedName };
}

function selects(selector: ToolNameSelector, name: string): boolean {
  return (
    (selector.equals === undefined || name === selector.equals) &&
    (selector.endsWith === undefined || name.endsWith(selector.endsWith)) &&
    (selector.includes === undefined || name.includes(selector.includes))
  );
}

function planUsage(
  response: StepResponse,
  items: readonly PlanItem[],
  body: unknown,
  cache: CacheUsage | undefined,
): PlannedUsage {
  const scripted = response.usage;
  const output = scripted?.output_tokens ?? estimateTokens(items.map(outputTextOf).join(""));
  if (!scripted && cache) return { ...cache, output_tokens: output };
  return {
    input_tokens: scripted?.input_tokens ?? estimateTokens(JSON.stringify(body ?? "")),
    output_tokens: output,
    cache_read_input_tokens: scripted?.cache_read_input_tokens ?? 0,
    cache_creation_input_tokens: scripted?.cache_creation_input_tokens ?? 0,
  };
}

function outputTextOf(item: PlanItem): string {
  if (item.kind === "text") return item.text;
  if (item.kind === "thinking") return item.thinking;
  if (item.kind === "tool_call") return JSON.stringify(item.input);
  return "";
}

/** Splits by code points so no delta carries half a surrogate pair. */
export function splitIntoChunks(text: string, count: number): string[] {
  const codePoints = Array.from(text);
  if (codePoints.length === 0) return [];
  const pieces = Math.min(count, codePoints.length);
  const size = Math.ceil(codePoints.length / pieces);
  const chunks: string[] = [];
  for (let start = 0; start < codePoints.length; start += size) {
    chunks.push(codePoints.slice(start, start + size).join(""));
  }
  return chunks;
}

export function toolCallsOf(plan: AnswerPlan): RecordedToolCall[] {
  return plan.items.flatMap((item) =>
    item.kind === "tool_call"
      ? [
          {
            id: item.id,
            name: item.name,
            ...(item.namespace === undefined ? {} : { namespace: item.namespace }),
            input: item.input,
          },
        ]
      : [],
  );
}
