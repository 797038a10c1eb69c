import { type StreamStall, ToolCallLedger } from "@bridgeworks/delivery-reconciler";
import type { ClaudeSessionRecord } from "@bridgeworks/protocol";
import { ClaudeQuery, type ClaudeQueryHandlers } from "./claude-query.js";
import { ClaudeStreamReader, type ClaudeTurnOutcome } from "./claude-stream.js";
import { closeInBackground } from "./closing-queries.js";
import { renderUnseen } from "./content.js";
import { processEndedMessage } from "./errors.js";
import type { AssistantEventStream } from "./event-stream.js";
import type { ToolCallHandler } from "./mcp-tools.js";
import type { NormalizedContext } from "./pi-adapter.js";
import type { PiModel, PiStreamOptions } from "./pi-types.js";
import { type QueryInputs, querySpec, settingsOf } from "./query-inputs.js";
import { planQuery, type QueryAction, type QueryEvent } from "./query-planner.js";
import { type ConversationMessage, fingerprintOf, type QueryState } from "./query-state.js";
import type { RateLimitState } from "./rate-limits.js";
import { SessionDiag } from "./session-diag.js";
import type { BridgeSessionOptions } from "./session-options.js";
import { claudeSessionOf, sessionRecordOf } from "./session-record.js";
import { keepWarmReport, sessionStreamSink } from "./session-sink.js";
import type { SpendRefusal } from "./spend-guard.js";
import { claimSuccessor, type SuccessorQuery } from "./successor-query.js";
import { toolCallAnswerer } from "./tool-answers.js";
import { PiTurn } from "./turn.js";
import { TurnReceipts } from "./turn-receipt.js";

/**
 * One Pi session served by one long-lived Claude Code query (streaming input). Pi's `streamSimple`
 * calls open Pi streams; Claude Code's messages fill them; the ledger pairs tool calls and results.
 * Which query runs, and on what Claude session, is the planner's (`query-planner.ts`) to say.
 */
export class BridgeSession {
  readonly ledger: ToolCallLedger<ConversationMessage>;
  private state: QueryState = { kind: "none" };
  /** The query of a `running` state. */
  private live: ClaudeQuery | undefined;
  private closed: Promise<void> = Promise.resolve();
  /** A query being started ahead of a prompt (its predecessor closing first). */
  private starting: Promise<void> = Promise.resolve();
  /** The Pi stream open now, if any. */
  private turn: PiTurn | undefined;
  /** Pi messages in the context that opened the current turn (its answer becomes message #turnBase). */
  private turnBase = 0;
  private readonly watchedSignals = new WeakSet<AbortSignal>();
  /** Pi left claude-code during a run: end the query when Claude's turn ends. */
  private suspendAfterTurn = false;
  private readonly answerToolCall: ToolCallHandler;
  private readonly diag: SessionDiag;
  /** Each Pi run's receipt, taken at its end (and written to the diagnostics log then). */
  readonly receipts: TurnReceipts;

  constructor(private readonly options: BridgeSessionOptions) {
    this.ledger = new ToolCallLedger<ConversationMessage>({
      clock: options.clock,
      sink: (record) => {
        options.diag(record);
        this.receipts.noteLedger(record);
      },
      idleTimeoutMs: options.idleTimeoutMs,
      sessionId: options.sessionKey,
      onStall: (stall) => this.onStall(stall),
    });
    this.answerToolCall = toolCallAnswerer(this.ledger);
    this.diag = new SessionDiag(options.diag, options.clock, options.sessionKey);
    this.receipts = new TurnReceipts((receipt) => this.diag.receipt(receipt));
  }

  /** One `streamSimple` call. Never throws: failures end `stream` with an error event. */
  async serve(
    model: PiModel,
    context: NormalizedContext,
    streamOptions: PiStreamOptions,
    stream: AssistantEventStream,
  ): Promise<void> {
    const turn = new PiTurn(stream, model, this.options.clock.now());
    if (this.state.kind === "disposed") return turn.fail("error", "Claude Code provider was shut down");
    this.watchSignal(streamOptions.signal);
    if (streamOptions.signal?.aborted) return turn.fail("aborted", "Operation aborted");
    if (this.turn?.isOpen) this.failTurn("error", "Claude Code: superseded by a newer request from Pi");
    this.turn = turn;
    this.turnBase = context.messages.length;
    // Before the ledger delivers any result: a delivered result makes Claude Code send a request.
    const refusal = this.options.limits.refusal();
    if (refusal) return this.refuseSpending(refusal);

    const { delivery, flush } = this.ledger.beginStream(context.messages);
    if (delivery.unknownIds.length > 0) {
      return this.failTurn(
        "error",
        `Claude Code provider refused tool results for ids it never issued: ${delivery.unknownIds.join(", ")}`,
      );
    }
    if (flush.length > 0) {
      this.diag.flushed(flush.map((call) => call.id));
      for (const call of flush) turn.pushToolCall(call);
      return this.finishTurn("toolUse");
    }

    const messages = context.messages;
    const inputs: QueryInputs = {
      model,
      systemPrompt: context.systemPrompt,
      tools: context.tools,
      reasoning: streamOptions.reasoning,
      env: streamOptions.env,
    };
    // A query started ahead may still be closing its predecessor: plan once it runs.
    await this.starting;
    if (this.turn !== turn) return;
    const settings = settingsOf(inputs);
    const action = this.apply({ type: "request", messages, settings });
    this.receipts.requested({ action, messages, model: model.id, settings });
    const planned = this.state;
    switch (action.kind) {
      case "continue": {
        const live = this.live;
        // Never expected (a running state has its query); a retryable error beats a stream that hangs.
        if (!live) return this.failTurn("error", processEndedMessage("no Claude Code query was running"));
        live.tools.setTools(context.tools);
        // Results of this query's own calls reached it through their handlers; anything else is told.
        const unseen = messages
          .slice(action.tellFrom)
          .filter((message) => message.role !== "toolResult" || !live.issued.has(message.toolCallId));
        live.push(renderUnseen(unseen), action.midRound ? "next" : undefined);
        break;
      }
      case "resume":
      case "resume-at":
      case "fresh": {
        await this.closeLive();
        // An abort or a shutdown while the old query closed has already answered this turn.
        if (this.state !== planned) return;
        const live = this.startQuery(inputs, action, messages.length - action.tellFrom);
        live.push(renderUnseen(messages.slice(action.tellFrom)));
        break;
      }
      default:
        break;
    }
    turn.start();
  }

  /** A claude-code model selected or its session started: start (or keep) the query, sending nothing. */
  async prepare(inputs: QueryInputs): Promise<void> {
    this.suspendAfterTurn = false;
    if (this.state.kind === "disposed" || this.busy) return;
    const action = this.apply({ type: "prepare", settings: settingsOf(inputs) });
    if (action.kind !== "resume" && action.kind !== "resume-at" && action.kind !== "fresh") return;
    const planned = this.state;
    // A new session (`/new`) finds the query its predecessor started for it, if the settings match.
    const successor = action.kind === "fresh" ? claimSuccessor(settingsOf(inputs)) : undefined;
    this.starting = this.closeLive().then(() => {
      if (this.state === planned) this.startQuery(inputs, action, 0, true, successor);
      else if (successor) closeInBackground(successor.query.close());
    });
    await this.starting;
  }

  /** Pi moved to another provider: Claude Code ends, its session stays resumable. */
  async suspend(): Promise<void> {
    // Mid-run (Pi switched models while Claude answers) the run goes on here; Claude Code ends with it.
    this.suspendAfterTurn = this.busy;
    if (this.suspendAfterTurn) return;
    this.run(this.apply({ type: "suspend" }));
    await this.closed;
  }

  /** A Pi stream is open or a tool call is live: the query must go on. */
  private get busy(): boolean {
    return this.turn?.isOpen === true || this.ledger.snapshot().liveCount > 0;
  }

  /** This Pi session's Claude session as recorded before this process started (`--continue`). */
  restore(record: ClaudeSessionRecord): void {
    this.apply({ type: "restore", claude: claudeSessionOf(record) });
  }

  /** What to record so a later process can resume this conversation: its last completed turn. */
  get record(): ClaudeSessionRecord | undefined {
    return sessionRecordOf(this.state);
  }

  /** Pi aborted the agent run (Esc, RPC `abort`): fail everything live and stop Claude Code. */
  async abort(): Promise<void> {
    this.receipts.broke("abort");
    if (this.turn?.isOpen) this.failTurn("aborted", "Operation aborted");
    this.run(this.apply({ type: "aborted" }));
    // Stop Claude Code before answering its waiting handlers: an answered (or dropped) handler makes a
    // running Claude Code send the results to the model as a new request.
    await this.closed;
    this.ledger.abort("aborted by the user");
    this.ledger.checkQuiescence("abort");
  }

  async dispose(): Promise<void> {
    if (this.state.kind === "disposed") return;
    if (this.turn?.isOpen) this.failTurn("error", "Claude Code provider was shut down");
    this.run(this.apply({ type: "dispose" }));
    await this.closeLive();
    this.ledger.checkQuiescence("teardown");
    this.ledger.dispose();
  }

  private apply(event: QueryEvent): QueryAction {
    const step = planQuery(this.state, event);
    this.state = step.state;
    return step.action;
  }

  /** The actions an event outside a request can call for. */
  private run(action: QueryAction): void {
    if (action.kind === "close") void this.closeLive();
  }

  private startQuery(
    inputs: QueryInputs,
    action: Extract<QueryAction, { kind: "resume" | "resume-at" | "fresh" }>,
    replayedMessages: number,
    warm = false,
    successor?: SuccessorQuery,
  ): ClaudeQuery {
    const issued = successor?.issued ?? new Set<string>();
    const { ledger, receipts, diag } = this;
    const sink = sessionStreamSink(
      { ...this.options, ledger, receipts, diag, issued },
      {
        openTurn: () => (this.turn?.isOpen ? this.turn : undefined),
        sessionReported: (sessionId) => this.run(this.apply({ type: "session_reported", sessionId })),
        toolCallsComplete: () => this.finishTurn("toolUse"),
        turnEnded: (outcome) => this.onTurnEnd(outcome),
        rateLimited: (state) => this.onRateLimit(state),
      },
    );
    const reader = new ClaudeStreamReader(sink, () => this.options.clock.now());
    const handlers: ClaudeQueryHandlers = {
      onToolCall: this.answerToolCall,
      onMessage: (message) => {
        this.ledger.noteActivity();
        reader.read(message);
      },
      onEnded: (detail) => this.onQueryEnded(live, detail),
      onKeepWarm: keepWarmReport(receipts, diag),
    };
    const live: ClaudeQuery =
      successor?.query ?? new ClaudeQuery(querySpec(this.options, inputs, action, issued, warm), handlers);
    successor?.query.rebind(handlers);
    this.live = live;
    // Claude Code says nothing for seconds while it starts (bounded by the SDK's initialize timeout);
    // that is not a stalled stream.
    this.ledger.expectSilenceUntil(live.started);
    this.diag.queryStarted(action, replayedMessages, warm, successor !== undefined);
    void live.warmedUp?.then((outcome) => this.diag.warmUp(outcome));
    if (successor) {
      for (const message of successor.early.splice(0)) handlers.onMessage(message);
      if (successor.ended !== undefined) handlers.onEnded(successor.ended);
    }
    return live;
  }

  private onRateLimit(state: RateLimitState): void {
    this.diag.rateLimit(state);
    this.options.limits.note(state);
    this.options.limitsChanged();
  }

  /** Refused by the spending guard: Claude Code stops before its waiting handlers are answered (an
   * answered handler makes it send the results to the model); then Pi gets a final error. */
  private async refuseSpending(refusal: SpendRefusal): Promise<void> {
    const turn = this.turn;
    this.diag.spendRefused(refusal.limit);
    this.receipts.spendRefused();
    this.run(this.apply({ type: "turn_failed" }));
    await this.closed;
    this.ledger.abort("extra usage refused (CLAUDE_BRIDGE_SPEND=plan-only)");
    this.ledger.checkQuiescence("spend_refused");
    if (this.turn === turn) this.failTurn("error", refusal.message);
    this.options.limitsChanged();
  }

  private onTurnEnd(outcome: ClaudeTurnOutcome): void {
    if (!outcome.ok && outcome.limit) this.onRateLimit(outcome.limit);
    if (outcome.ok) {
      if (this.turn?.isOpen) this.finishTurn(outcome.stop);
      this.run(this.apply({ type: "turn_completed", uuid: outcome.uuid }));
    } else {
      this.receipts.broke(outcome.sessionLost ? "lost_session" : "failed_turn");
      if (this.turn?.isOpen) this.failTurn("error", outcome.message);
      else this.options.warn(outcome.message);
      this.run(this.apply({ type: outcome.sessionLost ? "session_lost" : "turn_failed" }));
    }
    this.ledger.checkQuiescence("turn_end");
    if (this.suspendAfterTurn) void this.suspend();
  }

  private onQueryEnded(live: ClaudeQuery, detail: string): void {
    if (this.live !== live) return;
    this.live = undefined;
    this.receipts.broke("failed_turn");
    this.diag.queryEnded(detail);
    this.ledger.abort("Claude Code ended");
    this.run(this.apply({ type: "query_ended" }));
    if (this.turn?.isOpen) this.failTurn("error", processEndedMessage(detail));
  }

  private onStall(stall: StreamStall): void {
    this.receipts.broke("failed_turn");
    if (this.turn?.isOpen) this.failTurn("error", stall.message);
    this.run(this.apply({ type: "turn_failed" }));
  }

  private finishTurn(reason: "stop" | "length" | "toolUse"): void {
    const turn = this.turn;
    if (!turn?.isOpen) return;
    turn.finish(reason);
    this.ledger.endStream("done");
    this.turn = undefined;
    const checkpoint = { length: this.turnBase + 1, fingerprint: fingerprintOf(turn.message) };
    this.run(this.apply({ type: "answered", checkpoint }));
  }

  private failTurn(reason: "aborted" | "error", text: string): void {
    const turn = this.turn;
    this.turn = undefined;
    if (!turn?.isOpen) return;
    turn.fail(reason, text);
    this.ledger.endStream("error");
    this.run(this.apply({ type: "turn_failed" }));
  }

  /** Ends the running query; resolves once it (and any query closing before it) is closed. */
  private closeLive(): Promise<void> {
    const live = this.live;
    this.live = undefined;
    if (live) {
      const closing = live
        .close()
        .catch((error: unknown) =>
          this.options.warn(`claude-code: closing Claude Code failed: ${String(error)}`),
        );
      this.closed = Promise.all([this.closed, closing]).then(() => undefined);
    }
    return this.closed;
  }

  private watchSignal(signal: AbortSignal | undefined): void {
    if (!signal || this.watchedSignals.has(signal)) return;
    this.watchedSignals.add(signal);
    signal.addEventListener("abort", () => void this.abort(), { once: true });
  }
}
