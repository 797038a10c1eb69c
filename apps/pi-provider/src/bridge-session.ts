import type {
  Options,
  Query,
  SDKAssistantMessageError,
  SDKMessage,
  SDKUserMessage,
  query as sdkQuery,
} from "@anthropic-ai/claude-agent-sdk";
import {
  type Clock,
  HandlerCancelledError,
  HandlerRefusedError,
  type StreamStall,
  type ToolCall,
  ToolCallLedger,
} from "@bridgeworks/delivery-reconciler";
import {
  type ClaudeUserBlock,
  isFailedAssistant,
  type McpToolResult,
  renderUnseen,
  toMcpToolResult,
} from "./content.js";
import type { DiagWriter } from "./diag-log.js";
import { apiErrorMessage, processEndedMessage } from "./errors.js";
import type { AssistantEventStream } from "./event-stream.js";
import { MCP_SERVER_NAME, MCP_TOOL_PREFIX, PiToolServer, piToolName } from "./mcp-tools.js";
import type { NormalizedContext } from "./pi-adapter.js";
import type { PiMessage, PiModel, PiStreamOptions, SystemMessage } from "./pi-types.js";
import { PromptQueue } from "./prompt-queue.js";
import { type AnthropicUsage, PiTurn } from "./turn.js";

type ConversationMessage = Exclude<PiMessage, SystemMessage>;

export interface BridgeSessionOptions {
  /** Pi's `options.sessionId` (one Claude Code query per Pi session), `one-shot-<n>` for a one-shot request. */
  readonly sessionKey: string;
  /** The environment Claude Code runs with (Agent SDK `env` replaces the child's entirely). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly clock: Clock;
  readonly idleTimeoutMs: number;
  readonly diag: DiagWriter;
  readonly claudeExecutable: string | undefined;
  /** The Agent SDK's `query` (injectable for tests). */
  readonly runQuery: typeof sdkQuery;
  /** Human-readable warnings (stderr). */
  readonly warn: (line: string) => void;
}

/** How far Claude's conversation matches Pi's: the first `length` messages, the last one recognised. */
interface Checkpoint {
  readonly length: number;
  readonly fingerprint: string | undefined;
}

interface LiveQuery {
  readonly query: Query;
  readonly input: PromptQueue;
  readonly tools: PiToolServer;
  readonly settings: string;
  closing: boolean;
  stderrTail: string;
  apiError: { code: SDKAssistantMessageError | undefined; text: string } | undefined;
  stopReason: string | null | undefined;
  toolBlocks: Map<number, { id: string; name: string; json: string }>;
}

const STDERR_TAIL_CHARS = 2_000;
const INTERRUPT_GRACE_MS = 2_000;

/**
 * One Pi session served by one long-lived Claude Code query (streaming input). Pi's `streamSimple`
 * calls open Pi streams; Claude Code's messages fill them; the ledger pairs tool calls and results.
 */
export class BridgeSession {
  readonly ledger: ToolCallLedger<ConversationMessage>;
  private live: LiveQuery | undefined;
  private turn: PiTurn | undefined;
  /** Pi messages in the context that opened the current turn (its answer becomes message #turnBase). */
  private turnBase = 0;
  private claudeSessionId: string | undefined;
  /** What Claude's conversation holds of Pi's, while it matches. */
  private known: Checkpoint | undefined;
  /** After a completed turn: Pi's checkpoint and the uuid of Claude's last chain entry. */
  private lastGood: { checkpoint: Checkpoint; uuid: string | undefined } | undefined;
  private lastChainUuid: string | undefined;
  /** Claude's conversation holds something Pi's does not (a failed or aborted turn). */
  private dirty = false;
  private readonly watchedSignals = new WeakSet<AbortSignal>();
  private disposed = false;

  constructor(private readonly options: BridgeSessionOptions) {
    this.ledger = new ToolCallLedger<ConversationMessage>({
      clock: options.clock,
      sink: (record) => options.diag(record),
      idleTimeoutMs: options.idleTimeoutMs,
      sessionId: options.sessionKey,
      onStall: (stall) => this.onStall(stall),
    });
  }

  /** One `streamSimple` call. Never throws: failures end `stream` with an error event. */
  async serve(
    model: PiModel,
    context: NormalizedContext,
    streamOptions: PiStreamOptions,
    stream: AssistantEventStream,
  ): Promise<void> {
    const turn = new PiTurn(stream, model, this.options.clock.now());
    if (this.disposed) return turn.fail("error", "Claude Code provider was shut down");
    this.watchSignal(streamOptions.signal);
    if (streamOptions.signal?.aborted) return turn.fail("aborted", "Operation aborted");
    if (this.turn?.isOpen) this.failTurn("error", "Claude Code: superseded by a newer request from Pi");
    this.turn = turn;
    this.turnBase = context.messages.length;

    const { delivery, flush } = this.ledger.beginStream(context.messages);
    if (delivery.unknownIds.length > 0) {
      return this.failTurn(
        "error",
        `Claude Code provider refused tool results for ids it never issued: ${delivery.unknownIds.join(", ")}`,
      );
    }
    if (flush.length > 0) {
      this.options.diag({
        type: "undelivered_tool_calls_flushed",
        ...this.recordContext(),
        ids: flush.map((c) => c.id),
      });
      for (const call of flush) turn.pushToolCall(call);
      return this.finishTurn("toolUse");
    }

    const settings = JSON.stringify([model.id, context.systemPrompt, streamOptions.reasoning ?? null]);
    const unseen = this.unseenMessages(context.messages);
    const live = this.live;
    const last = context.messages.at(-1);
    // Mid tool round the query must go on (its handlers hold the results just delivered); a new
    // model, prompt or thinking level takes effect at the next user turn.
    const midRound = last?.role === "toolResult";
    if (live && !live.closing && !this.dirty && unseen && (midRound || live.settings === settings)) {
      const asks = unseen.filter((message) => message.role !== "toolResult");
      if (asks.length > 0 || last?.role === "toolResult") {
        live.tools.setTools(context.tools);
        if (asks.length > 0)
          this.pushUser(live, renderUnseen(asks), last?.role === "toolResult" ? "next" : undefined);
        this.known = checkpointOf(context.messages);
        turn.start();
        return;
      }
    }

    await this.closeLive();
    let resume: { id: string; at?: string } | undefined;
    let tellFrom = 0;
    if (this.claudeSessionId && !this.dirty && this.known && unseen) {
      resume = { id: this.claudeSessionId };
      tellFrom = this.known.length;
    } else if (this.claudeSessionId && this.lastGood && matches(context.messages, this.lastGood.checkpoint)) {
      resume = { id: this.claudeSessionId, ...(this.lastGood.uuid ? { at: this.lastGood.uuid } : {}) };
      tellFrom = this.lastGood.checkpoint.length;
    }
    const started = this.startQuery(model, context, streamOptions, settings, resume);
    this.options.diag({
      type: "claude_query_started",
      ...this.recordContext(),
      resumed: resume !== undefined,
      rewound: resume?.at !== undefined,
      replayedMessages: context.messages.length - tellFrom,
    });
    this.dirty = false;
    this.pushUser(started, renderUnseen(context.messages.slice(tellFrom)));
    this.known = checkpointOf(context.messages);
    turn.start();
  }

  /** What each of this session's own diagnostics records carries after its type. */
  private recordContext(): { at: string; sessionId: string } {
    return { at: new Date(this.options.clock.now()).toISOString(), sessionId: this.options.sessionKey };
  }

  /** Pi aborted the agent run (Esc, RPC `abort`): fail everything live and stop Claude Code. */
  async abort(): Promise<void> {
    if (this.turn?.isOpen) this.failTurn("aborted", "Operation aborted");
    this.dirty = true;
    // Stop Claude Code before answering its waiting handlers: an answered (or dropped) handler makes a
    // running Claude Code send the results to the model as a new request.
    await this.closeLive();
    this.ledger.abort("aborted by the user");
    this.ledger.checkQuiescence("abort");
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    if (this.turn?.isOpen) this.failTurn("error", "Claude Code provider was shut down");
    await this.closeLive();
    this.ledger.checkQuiescence("teardown");
    this.ledger.dispose();
  }

  /** Pids are the Agent SDK's business; this says whether a Claude Code process is meant to run. */
  get hasLiveQuery(): boolean {
    return this.live !== undefined && !this.live.closing;
  }

  private startQuery(
    model: PiModel,
    context: NormalizedContext,
    streamOptions: PiStreamOptions,
    settings: string,
    resume: { id: string; at?: string } | undefined,
  ): LiveQuery {
    const input = new PromptQueue();
    const tools = new PiToolServer((call) => this.answerToolCall(call));
    tools.setTools(context.tools);
    const env: Record<string, string | undefined> = {
      ...this.options.env,
      ...streamOptions.env,
      // Pi's auto-retry is the one retry layer the user sees; Claude Code's own retries would hide
      // a rate limit for minutes.
      CLAUDE_CODE_MAX_RETRIES: this.options.env.CLAUDE_CODE_MAX_RETRIES ?? "0",
      // Pi compacts its own history; Claude Code compacting underneath would desynchronise the two.
      DISABLE_AUTO_COMPACT: "1",
      ENABLE_CLAUDEAI_MCP_SERVERS: "0",
    };
    const live: LiveQuery = {
      query: undefined as unknown as Query,
      input,
      tools,
      settings,
      closing: false,
      stderrTail: "",
      apiError: undefined,
      stopReason: undefined,
      toolBlocks: new Map(),
    };
    const queryOptions: Options = {
      cwd: this.options.cwd,
      env,
      model: model.id,
      tools: [],
      allowedTools: [`${MCP_TOOL_PREFIX}*`],
      // Never bypassPermissions: Claude Code refuses it as root. Pi's tools are allowed by name.
      permissionMode: "dontAsk",
      mcpServers: {
        [MCP_SERVER_NAME]: {
          type: "sdk",
          name: MCP_SERVER_NAME,
          instance: tools.server as never,
          // The ledger's own deadlines end every wait; this only keeps Claude Code's from firing first.
          timeout: 2 * 60 * 60_000,
        },
      },
      strictMcpConfig: true,
      settingSources: [],
      includePartialMessages: true,
      ...(context.systemPrompt ? { systemPrompt: context.systemPrompt } : {}),
      ...(streamOptions.reasoning
        ? { effort: streamOptions.reasoning === "minimal" ? "low" : streamOptions.reasoning }
        : { thinking: { type: "disabled" } }),
      ...(resume ? { resume: resume.id, ...(resume.at ? { resumeSessionAt: resume.at } : {}) } : {}),
      ...(this.options.claudeExecutable ? { pathToClaudeCodeExecutable: this.options.claudeExecutable } : {}),
      stderr: (data) => {
        live.stderrTail = (live.stderrTail + data).slice(-STDERR_TAIL_CHARS);
      },
    };
    (live as { query: Query }).query = this.options.runQuery({ prompt: input, options: queryOptions });
    this.live = live;
    void this.consume(live);
    return live;
  }

  private async consume(live: LiveQuery): Promise<void> {
    let failure: unknown;
    try {
      for await (const message of live.query) {
        if (live.closing) continue;
        this.onClaudeMessage(live, message);
      }
    } catch (error) {
      failure = error;
    }
    this.onQueryEnded(live, failure);
  }

  private onClaudeMessage(live: LiveQuery, message: SDKMessage): void {
    this.ledger.noteActivity();
    switch (message.type) {
      case "system":
        if (message.subtype === "init") this.claudeSessionId = message.session_id;
        else if (message.subtype === "api_retry")
          this.options.diag({
            type: "claude_api_retry",
            ...this.recordContext(),
            status: message.error_status,
          });
        return;
      case "stream_event":
        if (message.parent_tool_use_id === null) this.onStreamEvent(live, message.event);
        return;
      case "assistant":
        if (message.parent_tool_use_id !== null) return;
        this.lastChainUuid = message.uuid;
        if (message.error) {
          const text = message.message.content
            .map((block) => (block.type === "text" ? block.text : ""))
            .join("");
          live.apiError = { code: message.error, text };
        }
        return;
      case "user":
        if (message.parent_tool_use_id === null && message.uuid) this.lastChainUuid = message.uuid;
        return;
      case "result":
        this.onResult(live, message);
        return;
      case "rate_limit_event":
        this.options.diag({
          type: "claude_rate_limit",
          ...this.recordContext(),
          status: message.rate_limit_info.status,
        });
        return;
      default:
        return;
    }
  }

  private onStreamEvent(
    live: LiveQuery,
    event: Extract<SDKMessage, { type: "stream_event" }>["event"],
  ): void {
    const turn = this.turn?.isOpen ? this.turn : undefined;
    switch (event.type) {
      case "message_start":
        live.toolBlocks.clear();
        live.stopReason = undefined;
        turn?.beginClaudeMessage(event.message.usage as AnthropicUsage);
        return;
      case "content_block_start": {
        const block = event.content_block;
        if (block.type === "tool_use") {
          live.toolBlocks.set(event.index, { id: block.id, name: block.name, json: "" });
        } else if (block.type === "text" || block.type === "thinking") {
          if (turn) turn.blockStart(event.index, block.type);
          else
            this.options.diag({
              type: "content_without_pi_stream",
              ...this.recordContext(),
              block: block.type,
            });
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
          const tool = live.toolBlocks.get(event.index);
          if (tool) tool.json += delta.partial_json;
        }
        return;
      }
      case "content_block_stop": {
        const tool = live.toolBlocks.get(event.index);
        if (!tool) {
          turn?.blockStop(event.index);
          return;
        }
        live.toolBlocks.delete(event.index);
        const call: ToolCall = {
          id: tool.id,
          name: piToolName(tool.name),
          arguments: parseArguments(tool.json),
        };
        if (this.ledger.recordToolUse(call) === "stream") turn?.pushToolCall(call);
        return;
      }
      case "message_delta":
        live.stopReason = event.delta.stop_reason;
        turn?.updateUsage(event.usage as AnthropicUsage);
        return;
      case "message_stop":
        // Every tool_use block of the message is on the stream now: Pi may run them.
        if (turn?.hasToolCalls) this.finishTurn("toolUse");
        return;
    }
  }

  private onResult(live: LiveQuery, result: Extract<SDKMessage, { type: "result" }>): void {
    // `subtype: "success"` can carry `is_error: true` (an API error turned into a reply): is_error decides.
    if (result.is_error) {
      const detail =
        live.apiError?.text ||
        ("result" in result && result.result) ||
        ("errors" in result ? result.errors.join("; ") : "") ||
        result.subtype;
      const message = apiErrorMessage(live.apiError?.code, detail);
      if (this.turn?.isOpen) this.failTurn("error", message);
      else this.options.warn(message);
      this.dirty = true;
    } else {
      if (this.turn?.isOpen) this.finishTurn(live.stopReason === "max_tokens" ? "length" : "stop");
      if (!this.dirty && this.known) this.lastGood = { checkpoint: this.known, uuid: this.lastChainUuid };
    }
    live.apiError = undefined;
    this.ledger.checkQuiescence("turn_end");
  }

  private onQueryEnded(live: LiveQuery, failure: unknown): void {
    const expected = live.closing;
    live.closing = true;
    if (this.live === live) this.live = undefined;
    if (expected) return;
    const detail = [
      failure instanceof Error ? failure.message : failure ? String(failure) : "the query ended",
      live.stderrTail.trim(),
    ]
      .filter(Boolean)
      .join("\n");
    this.options.diag({
      type: "claude_query_ended",
      ...this.recordContext(),
      detail: detail.slice(0, 500),
    });
    this.ledger.abort("Claude Code ended");
    this.dirty = true;
    if (this.turn?.isOpen) this.failTurn("error", processEndedMessage(detail));
  }

  private onStall(stall: StreamStall): void {
    if (this.turn?.isOpen) this.failTurn("error", stall.message);
    this.dirty = true;
    void this.closeLive();
  }

  private async answerToolCall(call: {
    toolUseId: string | undefined;
    name: string;
    signal: AbortSignal;
  }): Promise<McpToolResult> {
    if (call.toolUseId === undefined) {
      return errorResult(
        `Tool call ${call.name} carried no _meta["claudecode/toolUseId"]; without it no result can be paired, so it was not run.`,
      );
    }
    try {
      const answer = await this.ledger.awaitResult(call.toolUseId, call.signal);
      // A steering message comes in the same Pi context as the results it follows, and was pushed
      // before this continuation ran. Claude Code must hold it when the result arrives: it then sends
      // both in one request. Arriving after, it becomes a turn of its own that no Pi stream is open
      // for. The Agent SDK writes a pushed message within microtasks; one macrotask waits for that.
      await nextMacrotask();
      return answer.kind === "result"
        ? toMcpToolResult(answer.message as Extract<ConversationMessage, { role: "toolResult" }>)
        : errorResult(answer.text);
    } catch (error) {
      if (error instanceof HandlerCancelledError || error instanceof HandlerRefusedError)
        return errorResult(error.message);
      throw error;
    }
  }

  private pushUser(live: LiveQuery, blocks: ClaudeUserBlock[], priority?: "next"): void {
    if (blocks.length === 0) return;
    const message: SDKUserMessage = {
      type: "user",
      message: { role: "user", content: blocks },
      parent_tool_use_id: null,
      ...(priority ? { priority } : {}),
    };
    live.input.push(message);
  }

  private finishTurn(reason: "stop" | "length" | "toolUse"): void {
    const turn = this.turn;
    if (!turn?.isOpen) return;
    turn.finish(reason);
    this.ledger.endStream("done");
    this.known = { length: this.turnBase + 1, fingerprint: fingerprintOf(turn.message) };
    this.turn = undefined;
  }

  private failTurn(reason: "aborted" | "error", text: string): void {
    const turn = this.turn;
    this.turn = undefined;
    if (!turn?.isOpen) return;
    turn.fail(reason, text);
    this.ledger.endStream("error");
    this.dirty = true;
  }

  private unseenMessages(messages: readonly ConversationMessage[]): ConversationMessage[] | undefined {
    if (!this.known || !matches(messages, this.known)) return undefined;
    return messages.slice(this.known.length).filter((message) => !isFailedAssistant(message));
  }

  private async closeLive(): Promise<void> {
    const live = this.live;
    this.live = undefined;
    if (!live || live.closing) return;
    live.closing = true;
    // An interrupt ends the turn inside Claude Code (no further model request); close() then ends
    // the process. A Claude Code too stuck to answer the interrupt is closed after a short wait.
    await Promise.race([live.query.interrupt().catch(() => undefined), delay(INTERRUPT_GRACE_MS)]);
    live.input.close();
    try {
      live.query.close();
    } catch (error) {
      this.options.warn(`claude-code: closing Claude Code failed: ${String(error)}`);
    }
  }

  private watchSignal(signal: AbortSignal | undefined): void {
    if (!signal || this.watchedSignals.has(signal)) return;
    this.watchedSignals.add(signal);
    signal.addEventListener("abort", () => void this.abort(), { once: true });
  }
}

function checkpointOf(messages: readonly ConversationMessage[]): Checkpoint {
  const last = messages.at(-1);
  return { length: messages.length, fingerprint: last ? fingerprintOf(last) : undefined };
}

function matches(messages: readonly ConversationMessage[], checkpoint: Checkpoint): boolean {
  if (messages.length < checkpoint.length) return false;
  if (checkpoint.length === 0) return true;
  const anchor = messages[checkpoint.length - 1];
  return anchor !== undefined && fingerprintOf(anchor) === checkpoint.fingerprint;
}

/** Pi rebuilds the context array for every call; a message is recognised by role, time and id. */
function fingerprintOf(message: ConversationMessage): string {
  return `${message.role}|${message.timestamp}|${message.role === "toolResult" ? message.toolCallId : ""}`;
}

function parseArguments(json: string): unknown {
  if (json.trim() === "") return {};
  try {
    return JSON.parse(json);
  } catch {
    return {};
  }
}

function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function errorResult(text: string): McpToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
