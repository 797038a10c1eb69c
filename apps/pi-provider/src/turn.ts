import type { ToolCall } from "@bridgeworks/delivery-reconciler";
import type { AssistantEventStream } from "./event-stream.js";
import type { AssistantMessage, PiModel, PiToolCall, StopReason, Usage } from "./pi-types.js";

/** Token counts as Anthropic reports them (`message_start` / `message_delta`). */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

type OpenBlock = { kind: "text" | "thinking"; contentIndex: number } | { kind: "tool_use" };

/**
 * One open Pi stream: builds the `AssistantMessage` Pi will store and pushes balanced events for it.
 * Claude Code's stream events arrive through the block methods; a Claude message's usage replaces
 * the previous one's (each Claude message is one model request).
 */
export class PiTurn {
  readonly message: AssistantMessage;
  private started = false;
  private readonly blocks = new Map<number, OpenBlock>();
  private toolCallCount = 0;
  private finished = false;

  constructor(
    readonly stream: AssistantEventStream,
    private readonly model: PiModel,
    now: number,
  ) {
    this.message = {
      role: "assistant",
      content: [],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: emptyUsage(),
      stopReason: "stop",
      timestamp: now,
    };
  }

  get isOpen(): boolean {
    return !this.finished;
  }

  get hasToolCalls(): boolean {
    return this.toolCallCount > 0;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stream.push({ type: "start", partial: this.message });
  }

  /** `message_start` of a new Claude message on this stream. */
  beginClaudeMessage(usage: AnthropicUsage | undefined): void {
    this.start();
    this.blocks.clear();
    this.setUsage(usage, true);
  }

  blockStart(index: number, kind: "text" | "thinking" | "tool_use"): void {
    this.start();
    if (kind === "tool_use") {
      this.blocks.set(index, { kind });
      return;
    }
    const contentIndex = this.message.content.length;
    this.message.content.push(
      kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "" },
    );
    this.blocks.set(index, { kind, contentIndex });
    this.stream.push({
      type: kind === "text" ? "text_start" : "thinking_start",
      contentIndex,
      partial: this.message,
    });
  }

  blockDelta(index: number, delta: { text?: string; thinking?: string; signature?: string }): void {
    const block = this.blocks.get(index);
    if (!block || block.kind === "tool_use") return;
    const content = this.message.content[block.contentIndex];
    if (content?.type === "text" && delta.text !== undefined) {
      content.text += delta.text;
      this.stream.push({
        type: "text_delta",
        contentIndex: block.contentIndex,
        delta: delta.text,
        partial: this.message,
      });
    } else if (content?.type === "thinking") {
      if (delta.thinking !== undefined) {
        content.thinking += delta.thinking;
        this.stream.push({
          type: "thinking_delta",
          contentIndex: block.contentIndex,
          delta: delta.thinking,
          partial: this.message,
        });
      }
      if (delta.signature !== undefined)
        content.thinkingSignature = (content.thinkingSignature ?? "") + delta.signature;
    }
  }

  blockStop(index: number): void {
    const block = this.blocks.get(index);
    this.blocks.delete(index);
    if (!block || block.kind === "tool_use") return;
    const content = this.message.content[block.contentIndex];
    if (content?.type === "text")
      this.stream.push({
        type: "text_end",
        contentIndex: block.contentIndex,
        content: content.text,
        partial: this.message,
      });
    else if (content?.type === "thinking")
      this.stream.push({
        type: "thinking_end",
        contentIndex: block.contentIndex,
        content: content.thinking,
        partial: this.message,
      });
  }

  /** A complete tool call (arguments parsed), as `toolcall_start` + `toolcall_end`. */
  pushToolCall(call: ToolCall): void {
    this.start();
    const toolCall: PiToolCall = {
      type: "toolCall",
      id: call.id,
      name: call.name,
      arguments: isRecord(call.arguments) ? call.arguments : {},
    };
    const contentIndex = this.message.content.length;
    this.message.content.push(toolCall);
    this.toolCallCount++;
    this.stream.push({ type: "toolcall_start", contentIndex, partial: this.message });
    this.stream.push({ type: "toolcall_end", contentIndex, toolCall, partial: this.message });
  }

  /** `message_delta`: output tokens are cumulative for the message. */
  updateUsage(usage: AnthropicUsage | undefined): void {
    this.setUsage(usage, false);
  }

  finish(reason: "stop" | "length" | "toolUse"): void {
    if (this.finished) return;
    this.start();
    this.finished = true;
    this.message.stopReason = reason;
    this.stream.push({ type: "done", reason, message: this.message });
  }

  fail(reason: "aborted" | "error", errorMessage: string): void {
    if (this.finished) return;
    this.finished = true;
    this.message.stopReason = reason satisfies StopReason;
    this.message.errorMessage = errorMessage;
    this.stream.push({ type: "error", reason, error: this.message });
  }

  private setUsage(usage: AnthropicUsage | undefined, fresh: boolean): void {
    if (!usage) return;
    const current = this.message.usage;
    const pick = (value: number | null | undefined, previous: number) =>
      typeof value === "number" ? value : fresh ? 0 : previous;
    const next: Usage = {
      input: pick(usage.input_tokens, current.input),
      output: pick(usage.output_tokens, current.output),
      cacheRead: pick(usage.cache_read_input_tokens, current.cacheRead),
      cacheWrite: pick(usage.cache_creation_input_tokens, current.cacheWrite),
      totalTokens: 0,
      cost: current.cost,
    };
    next.totalTokens = next.input + next.output + next.cacheRead + next.cacheWrite;
    next.cost = costOf(this.model, next);
    this.message.usage = next;
  }
}

export function emptyUsage(): Usage {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/** Pi's `calculateCost`: the model's rates are dollars per million tokens. */
export function costOf(model: PiModel, usage: Omit<Usage, "cost">): Usage["cost"] {
  const input = (model.cost.input / 1e6) * usage.input;
  const output = (model.cost.output / 1e6) * usage.output;
  const cacheRead = (model.cost.cacheRead / 1e6) * usage.cacheRead;
  const cacheWrite = (model.cost.cacheWrite / 1e6) * usage.cacheWrite;
  return { input, output, cacheRead, cacheWrite, total: input + output + cacheRead + cacheWrite };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
