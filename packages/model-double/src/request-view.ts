import type { ApiName } from "./script.js";

/** A tool offered by the request; namespaced tools are codex's form for MCP tools. */
export interface OfferedTool {
  readonly name: string;
  readonly namespace?: string;
  /** `namespace__name` for namespaced tools, so one selector fits claude and codex alike. */
  readonly qualifiedName: string;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function arrayField(value: unknown, field: string): unknown[] {
  if (!isObject(value)) return [];
  const inner = value[field];
  return Array.isArray(inner) ? inner : [];
}

function stringField(value: unknown, field: string): string | undefined {
  if (!isObject(value)) return undefined;
  const inner = value[field];
  return typeof inner === "string" ? inner : undefined;
}

export function requestedModel(body: unknown): string | undefined {
  return stringField(body, "model");
}

/** The conversation items: `messages` (anthropic) or `input` (openai, where a string is one user message). */
function conversationItems(api: ApiName, body: unknown): unknown[] {
  if (api === "anthropic") return arrayField(body, "messages");
  if (isObject(body) && typeof body.input === "string") return [{ role: "user", content: body.input }];
  return arrayField(body, "input");
}

function textOfContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part) => isObject(part) && (part.type === "text" || part.type === "input_text"))
    .map((part) => stringField(part, "text") ?? "")
    .join("\n");
}

/** Roles that carry instructions rather than a turn (claude 2.1.332 appends a `system` message last). */
const instructionRoles = new Set(["system", "developer"]);

/**
 * Text of the latest turn when it is the user's: the last item that is not a system/developer message,
 * if it is a user message; "" otherwise (e.g. when the request ends with a tool call).
 */
export function lastUserText(api: ApiName, body: unknown): string {
  const items = conversationItems(api, body);
  for (let position = items.length - 1; position >= 0; position -= 1) {
    const item = items[position];
    if (!isObject(item)) return "";
    const isMessage = api === "anthropic" || item.type === undefined || item.type === "message";
    if (isMessage && typeof item.role === "string" && instructionRoles.has(item.role)) continue;
    return isMessage && item.role === "user" ? textOfContent(item.content) : "";
  }
  return "";
}

/** Every tool_use id / call_id the request carries a result for. */
export function toolResultIds(api: ApiName, body: unknown): Set<string> {
  const ids = new Set<string>();
  for (const item of conversationItems(api, body)) {
    if (api === "openai") {
      const callId = stringField(item, "call_id");
      if (stringField(item, "type") === "function_call_output" && callId) ids.add(callId);
      continue;
    }
    for (const block of arrayField(item, "content")) {
      const toolUseId = stringField(block, "tool_use_id");
      if (stringField(block, "type") === "tool_result" && toolUseId) ids.add(toolUseId);
    }
  }
  return ids;
}

/** Tools from the request's `tools[]`, namespaces flattened, in request order. */
export function offeredTools(body: unknown): OfferedTool[] {
  const tools: OfferedTool[] = [];
  for (const tool of arrayField(body, "tools")) {
    const name = stringField(tool, "name");
    if (!name) continue;
    if (stringField(tool, "type") === "namespace") {
      for (const inner of arrayField(tool, "tools")) {
        const innerName = stringField(inner, "name");
        if (innerName)
          tools.push({ name: innerName, namespace: name, qualifiedName: `${name}__${innerName}` });
      }
      continue;
    }
    tools.push({ name, qualifiedName: name });
  }
  return tools;
}

/** A rough token count (4 characters a token), for usage that the script leaves out and count_tokens. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** What a request carries as the result of one tool call. */
export interface ToolResultView {
  readonly text: string;
  /** Anthropic's `is_error`; an openai `function_call_output` has no such flag, so it reads false. */
  readonly isError: boolean;
}

/**
 * The result a request carries for tool call `id` (anthropic `tool_result` content or openai
 * `function_call_output` output), or undefined when it carries none.
 */
export function toolResult(api: ApiName, body: unknown, id: string): ToolResultView | undefined {
  for (const item of conversationItems(api, body)) {
    if (api === "openai") {
      if (stringField(item, "type") !== "function_call_output" || stringField(item, "call_id") !== id)
        continue;
      const output = isObject(item) ? item.output : undefined;
      return { text: typeof output === "string" ? output : textOfContent(output), isError: false };
    }
    for (const block of arrayField(item, "content")) {
      if (stringField(block, "type") !== "tool_result" || stringField(block, "tool_use_id") !== id) continue;
      return {
        text: textOfContent(isObject(block) ? block.content : undefined),
        isError: isObject(block) && block.is_error === true,
      };
    }
  }
  return undefined;
}

/** The text of `toolResult`, or undefined when the request carries no result for `id`. */
export function toolResultText(api: ApiName, body: unknown, id: string): string | undefined {
  return toolResult(api, body, id)?.text;
}
