/**
 * The part of Pi's provider API this package touches, as both Pi lines define it: the 0.73 line
 * (`@mariozechner/pi-ai`) and the current line (`@earendil-works/pi-ai` 1.x) share these shapes at
 * runtime. Declared here instead of imported so the bundle never loads either scope's code (see
 * pi-adapter.ts for what differs between the lines).
 */
export interface TextContent {
  type: "text";
  text: string;
}
export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  thinkingSignature?: string;
  redacted?: boolean;
}
export interface PiToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

export type StopReason = "stop" | "length" | "toolUse" | "error" | "aborted";

export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | PiToolCall)[];
  api: string;
  provider: string;
  model: string;
  usage: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  timestamp: number;
}

export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
}

export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  isError: boolean;
  timestamp: number;
}

/** Pi 1.x only: the prompt and the tool set travel as system messages inside the transcript. */
export interface SystemMessage {
  role: "system";
  content: string | TextContent[];
  sections?: Record<string, string | null>;
  toolsAdded?: PiTool[];
  toolsRemoved?: { name: string }[];
  timestamp: number;
}

export type PiMessage = UserMessage | AssistantMessage | ToolResultMessage | SystemMessage;

export interface PiTool {
  name: string;
  description: string;
  /** JSON Schema (TypeBox at the source). */
  parameters: Record<string, unknown>;
}

/** What `streamSimple` receives: `systemPrompt`/`tools` on 0.73, system messages on 1.x. */
export interface PiContext {
  systemPrompt?: string;
  messages: PiMessage[];
  tools?: PiTool[];
}

export interface PiModel {
  id: string;
  name?: string;
  api: string;
  provider: string;
  reasoning?: boolean;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

export interface PiStreamOptions {
  signal?: AbortSignal;
  sessionId?: string;
  reasoning?: "minimal" | "low" | "medium" | "high" | "xhigh";
  cacheRetention?: "none" | "short" | "long";
  /** Pi 1.x: provider-scoped environment, taking precedence over process.env. */
  env?: Record<string, string | undefined>;
}

export type AssistantMessageEvent =
  | { type: "start"; partial: AssistantMessage }
  | {
      type: "text_start" | "thinking_start" | "toolcall_start";
      contentIndex: number;
      partial: AssistantMessage;
    }
  | {
      type: "text_delta" | "thinking_delta" | "toolcall_delta";
      contentIndex: number;
      delta: string;
      partial: AssistantMessage;
    }
  | { type: "text_end" | "thinking_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "toolcall_end"; contentIndex: number; toolCall: PiToolCall; partial: AssistantMessage }
  | { type: "done"; reason: "stop" | "length" | "toolUse"; message: AssistantMessage }
  | { type: "error"; reason: "aborted" | "error"; error: AssistantMessage };
