import type { McpToolContent, McpToolResult } from "@bridgeworks/runtime";
import type { ImageContent, PiMessage, SystemMessage, TextContent, ToolResultMessage } from "./pi-types.js";

/** Anthropic content blocks a Claude Code user message accepts. */
export type ClaudeUserBlock =
  | { type: "text"; text: string }
  | { type: "image"; source: { type: "base64"; media_type: ImageMediaType; data: string } };

/** The image types the Messages API takes; Pi's `mimeType` is passed through as one of them. */
export type ImageMediaType = "image/jpeg" | "image/png" | "image/gif" | "image/webp";

type ConversationMessage = Exclude<PiMessage, SystemMessage>;

export function toClaudeBlocks(content: string | (TextContent | ImageContent)[]): ClaudeUserBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part) =>
    part.type === "text"
      ? { type: "text", text: part.text }
      : {
          type: "image",
          source: { type: "base64", media_type: part.mimeType as ImageMediaType, data: part.data },
        },
  );
}

/** Pi's `toolResult` message as the MCP `tools/call` answer: text and images as they are. */
export function toMcpToolResult(message: ToolResultMessage): McpToolResult {
  const content: McpToolContent[] = message.content.map((part) =>
    part.type === "text"
      ? { type: "text", text: part.text }
      : { type: "image", data: part.data, mimeType: part.mimeType },
  );
  if (content.length === 0) content.push({ type: "text", text: "" });
  return { content, ...(message.isError ? { isError: true } : {}) };
}

/**
 * What Claude must be told for `messages` it has not seen. Only user messages: the blocks go as they
 * are. Anything else (a turn another provider answered, tool rounds Claude Code never saw, a history
 * it cannot resume): a plain-text transcript first, then the latest user message's own blocks, so
 * images in the prompt still arrive as image blocks.
 */
export function renderUnseen(messages: readonly ConversationMessage[]): ClaudeUserBlock[] {
  const shown = messages.filter((message) => !isFailedAssistant(message));
  if (shown.every((message) => message.role === "user")) {
    return shown.flatMap((message) => toClaudeBlocks(message.content));
  }
  const last = shown.at(-1);
  const tail = last?.role === "user" ? last : undefined;
  const history = tail ? shown.slice(0, -1) : shown;
  const lines = ["<conversation_so_far>"];
  for (const message of history) lines.push(describe(message));
  lines.push("</conversation_so_far>");
  const blocks: ClaudeUserBlock[] = [{ type: "text", text: lines.join("\n") }];
  if (tail) blocks.push(...toClaudeBlocks(tail.content));
  else blocks.push({ type: "text", text: "Continue." });
  return blocks;
}

function describe(message: ConversationMessage): string {
  switch (message.role) {
    case "user":
      return `[user]\n${textOf(message.content)}`;
    case "assistant":
      return `[assistant]\n${message.content
        .map((part) =>
          part.type === "text"
            ? part.text
            : part.type === "toolCall"
              ? `(called tool ${part.name} ${JSON.stringify(part.arguments)})`
              : "",
        )
        .filter(Boolean)
        .join("\n")}`;
    case "toolResult":
      return `[tool result ${message.toolName}${message.isError ? " (error)" : ""}]\n${textOf(message.content)}`;
  }
}

function textOf(content: string | (TextContent | ImageContent)[]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? part.text : "(image)")).join("\n");
}

export function isFailedAssistant(message: ConversationMessage): boolean {
  return message.role === "assistant" && (message.stopReason === "error" || message.stopReason === "aborted");
}
