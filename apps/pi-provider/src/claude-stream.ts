import type { SDKAssistantMessageError, SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import type { ToolCall } from "@bridgeworks/delivery-reconciler";
import { apiErrorMessage, sessionLostMessage, usageLimitMessage } from "./errors.js";
import { piToolName } from "./mcp-tools.js";
import { isUsageLimitText, type RateLimitState, rateLimitState } from "./rate-limits.js";
import { parseToolArguments } from "./tool-arguments.js";
import type { AnthropicUsage, PiTurn } from "./turn.js";

type StreamEvent = Extract<SDKMessage, { type: "stream_event" }>["event"];
type ResultMessage = Extract<SDKMessage, { type: "result" }>;

/** How Claude's turn ended: `is_error` decides, never `subtype`. */
export type ClaudeTurnOutcome =
  | { readonly ok: true; readonly stop: "stop" | "length"; readonly uuid: string | undefined }
  /**
   * `limit`: a subscription usage limit was reached (it resets after hours). `sessionLost`: the Claude
   * session to resume does not exist (any more).
   */
  | {
      readonly ok: false;
      readonly message: string;
      readonly limit?: RateLimitState;
      readonly sessionLost?: true;
    };

/** Where the reader sends what it understood of Claude Code's messages. */
export interface ClaudeStreamSink {
  /** The Pi stream open now, if any. */
  readonly openTurn: () => PiTurn | undefined;
  /** Claude Code's `init`: the session it works on, and its version. */
  readonly onSessionId: (sessionId: string, claudeCodeVersion: string | undefined) => void;
  /** A model request's usage: at its `message_start` (`fresh`), then its `message_delta` totals. */
  readonly onUsage: (usage: AnthropicUsage | undefined, fresh: boolean) => void;
  /** A complete `tool_use` block whose arguments are a JSON object. */
  readonly onToolUse: (call: ToolCall) => void;
  /** A complete `tool_use` block whose arguments Pi cannot be given. */
  readonly onInvalidToolUse: (call: { id: string; name: string; problem: string }) => void;
  /** `message_stop`: every block of Claude's message was read. */
  readonly onMessageStop: () => void;
  readonly onTurnEnd: (outcome: ClaudeTurnOutcome) => void;
  /** Something worth a diagnostics record but no action. */
  readonly onNotice: (
    notice:
      | { type: "api_retry"; status: number | null }
      | { type: "rate_limit"; state: RateLimitState }
      | { type: "content_without_pi_stream"; block: string },
  ) => void;
}

/**
 * Reads one Claude Code query's SDK messages: stream events become Pi events on the open turn, tool
 * blocks become calls once complete (`content_block_stop`), and results end Claude's turn.
 */
export class ClaudeStreamReader {
  private readonly toolBlocks = new Map<number, { id: string; name: string; json: string }>();
  private apiError: { code: SDKAssistantMessageError | undefined; text: string } | undefined;
  private stopReason: string | null | undefined;
  /** Claude's last main-chain entry: where a later query can resume this conversation. */
  private lastChainUuid: string | undefined;
  private rateLimit: RateLimitState | undefined;

  constructor(
    private readonly sink: ClaudeStreamSink,
    private readonly now: () => number,
  ) {}

  read(message: SDKMessage): void {
    switch (message.type) {
      case "system":
        if (message.subtype === "init")
          this.sink.onSessionId(message.session_id, message.claude_code_version || undefined);
        else if (message.subtype === "api_retry")
          this.sink.onNotice({ type: "api_retry", status: message.error_status });
        return;
      case "stream_event":
        if (message.parent_tool_use_id === null) this.onStreamEvent(message.event);
        return;
      case "assistant":
        if (message.parent_tool_use_id !== null) return;
        this.lastChainUuid = message.uuid;
        if (message.error) {
          const text = message.message.content
            .map((block) => (block.type === "text" ? block.text : ""))
            .join("");
          this.apiError = { code: message.error, text };
        }
        return;
      case "user":
        if (message.parent_tool_use_id === null && message.uuid) this.lastChainUuid = message.uuid;
        return;
      case "result":
        this.onResult(message);
        return;
      case "rate_limit_event":
        this.rateLimit = rateLimitState(message.rate_limit_info);
        this.sink.onNotice({ type: "rate_limit", state: this.rateLimit });
        return;
      default:
        return;
    }
  }

  private onStreamEvent(event: StreamEvent): void {
    const turn = this.sink.openTurn();
    switch (event.type) {
      case "message_start":
        this.toolBlocks.clear();
        this.stopReason = undefined;
        this.sink.onUsage(event.message.usage as AnthropicUsage, true);
        turn?.beginClaudeMessage(event.message.usage as AnthropicUsage);
        return;
      case "content_block_start": {
        const block = event.content_block;
        if (block.type === "tool_use") {
          this.toolBlocks.set(event.index, { id: block.id, name: block.name, json: "" });
        } else if (block.type === "text" || block.type === "thinking") {
          if (turn) turn.blockStart(event.index, block.type);
          else this.sink.onNotice({ type: "content_without_pi_stream", block: block.type });
        }
        return;
      }
      case "content_block_delta": {
        const delta = event.delta;
        if (delta.type === "text_delta") turn?.blockDelta(event.index, { text: delta.text });
        else if (delta.type === "thinking_delta") turn?.blockDelta(event.index, { thinking: delta.thinking });
        else if (delta.type === "signature_delta")
          turn?.blockDelta(event.index, { signature: delta.signature });
        else if (delta.type === "input_json_delta") {
          const tool = this.toolBlocks.get(event.index);
          if (tool) tool.json += delta.partial_json;
        }
        return;
      }
      case "content_block_stop": {
        const tool = this.toolBlocks.get(event.index);
        if (!tool) {
          turn?.blockStop(event.index);
          return;
        }
        this.toolBlocks.delete(event.index);
        const name = piToolName(tool.name);
        const parsed = parseToolArguments(tool.json);
        if (parsed.ok) this.sink.onToolUse({ id: tool.id, name, arguments: parsed.arguments });
        else this.sink.onInvalidToolUse({ id: tool.id, name, problem: parsed.problem });
        return;
      }
      case "message_delta":
        this.stopReason = event.delta.stop_reason;
        this.sink.onUsage(event.usage as AnthropicUsage, false);
        turn?.updateUsage(event.usage as AnthropicUsage);
        return;
      case "message_stop":
        this.sink.onMessageStop();
        return;
    }
  }

  private onResult(result: ResultMessage): void {
    const apiError = this.apiError;
    this.apiError = undefined;
    if (!result.is_error) {
      this.sink.onTurnEnd({
        ok: true,
        stop: this.stopReason === "max_tokens" ? "length" : "stop",
        uuid: this.lastChainUuid,
      });
      return;
    }
    const detail =
      apiError?.text ||
      ("result" in result && result.result) ||
      ("errors" in result ? result.errors.join("; ") : "") ||
      result.subtype;
    if (/No conversation found with session ID/.test(detail)) {
      this.sink.onTurnEnd({ ok: false, message: sessionLostMessage(detail), sessionLost: true });
      return;
    }
    if (isUsageLimitText(detail)) {
      const limit: RateLimitState = {
        status: "rejected",
        window: this.rateLimit?.window,
        resetsAtMs: this.rateLimit?.resetsAtMs,
        utilization: this.rateLimit?.utilization,
      };
      this.sink.onTurnEnd({ ok: false, message: usageLimitMessage(detail, limit, this.now()), limit });
      return;
    }
    this.sink.onTurnEnd({ ok: false, message: apiErrorMessage(apiError?.code, detail) });
  }
}
