import {
  type DeliveryMismatchRecord,
  type LedgerEvent,
  type LedgerFailureReason,
  type LedgerState,
  ToolCallId,
} from "@bridgeworks/protocol";
import type { Clock } from "./clock.js";
import { ContextIndex } from "./context-index.js";
import { abortText, type DeadlinePhase, expiryText, piMayHaveRun, resolveDeadlines } from "./deadlines.js";
import { EntryDeadlines } from "./entry-deadlines.js";
import { HandlerCancelledError, HandlerRefusedError, LedgerDisposedError } from "./errors.js";
import { DEFAULT_IDLE_TIMEOUT_MS, MAX_TIMER_DELAY_MS } from "./idle-timeout.js";
import { IdleWatchdog, type StreamStall } from "./idle-watchdog.js";
import { answerArchived, answerSettled } from "./late-handlers.js";
import { LedgerDiagnostics } from "./ledger-diagnostics.js";
import {
  type ArchivedEntry,
  type Entry,
  failure,
  newEntry,
  parseToolCallId,
  stateOf,
  type Waiter,
} from "./ledger-entry.js";
import type {
  LedgerSnapshot,
  QuiescenceResult,
  StreamEnd,
  StreamOutcome,
  StreamStart,
  ToolCallLedgerOptions,
  ToolUseRoute,
} from "./ledger-types.js";
import { mismatchOf } from "./quiescence.js";
import { type DeliveryLedger, deliverResults } from "./result-delivery.js";
import { formatDuration } from "./stall-message.js";
import type { ContextMessage, ToolCall, ToolResult } from "./types.js";

/**
 * The ledger of one Claude Code query (or one Pi session) served by Pi's tools. It pairs Claude's
 * `tool_use` blocks, the MCP handlers waiting for them, and Pi's `toolResult` messages strictly by tool
 * call id. See the package README for the call sequence.
 */
export class ToolCallLedger<M extends ContextMessage = ContextMessage> {
  private readonly clock: Clock;
  private readonly deadlines: EntryDeadlines<M>;
  private readonly diagnostics: LedgerDiagnostics;
  private readonly delivery: DeliveryLedger<M>;
  private readonly watchdog: IdleWatchdog;
  private readonly context = new ContextIndex();
  /** Calls since the last quiescence check, in arrival order. */
  private readonly round = new Map<ToolCallId, Entry<M>>();
  private readonly live = new Map<ToolCallId, Entry<M>>();
  private readonly archive = new Map<ToolCallId, ArchivedEntry>();
  /** Ids of `toolCall` blocks in the context that this ledger never recorded. */
  private readonly foreignCallIds = new Set<string>();
  private readonly streamCalls = new Set<Entry<M>>();
  private streamOpen = false;
  private turnActive = false;
  private disposed = false;
  /** Silences no call shows, announced by `expectSilenceUntil` and not over yet. */
  private expectedSilences = 0;

  constructor(private readonly options: ToolCallLedgerOptions) {
    this.clock = options.clock;
    this.diagnostics = new LedgerDiagnostics(options);
    this.deadlines = new EntryDeadlines<M>({
      clock: this.clock,
      deadlines: resolveDeadlines(options.deadlines),
      streamOpen: () => this.streamOpen,
      onExpire: (entry, phase) => this.expire(entry, phase),
    });
    this.delivery = {
      context: this.context,
      round: this.round,
      live: this.live,
      archive: this.archive,
      foreignCallIds: this.foreignCallIds,
      diagnostics: this.diagnostics,
      acceptResult: (entry, message) => this.acceptResult(entry, message),
      noteMissing: (entry) => {
        entry.missing = true;
        this.record(entry, "missing_from_context", stateOf(entry));
        this.deadlines.rearm(entry);
      },
    };
    const timeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > MAX_TIMER_DELAY_MS) {
      throw new RangeError(
        `idleTimeoutMs must be a whole number of milliseconds in 0..${MAX_TIMER_DELAY_MS} (0 = off), got ${String(timeoutMs)}`,
      );
    }
    this.watchdog = new IdleWatchdog({
      clock: this.clock,
      timeoutMs,
      isSuppressed: () => this.live.size > 0 || this.expectedSilences > 0,
      onStall: (stall) => this.reportStall(stall),
    });
  }

  /**
   * First thing in every `streamSimple` call: delivers the results in Pi's whole context (only the part
   * appended since the previous call is read), opens the stream, and returns the undelivered calls to
   * flush on it. A stream still open from before is closed as failed first, so its calls get flushed.
   */
  beginStream(messages: readonly M[]): StreamStart {
    this.assertUsable("beginStream");
    if (this.streamOpen) this.closeStream("error");
    this.streamOpen = true;
    this.turnActive = true;
    const delivery = deliverResults(this.delivery, messages);
    const flush: ToolCall[] = [];
    for (const entry of this.live.values()) {
      if (entry.progress === "undelivered" && !entry.delivered) {
        const from = stateOf(entry);
        entry.progress = "emitted";
        this.streamCalls.add(entry);
        flush.push(entry.call!);
        this.record(entry, "flushed", from);
      }
      this.deadlines.rearm(entry);
    }
    this.watchdog.restart();
    return { delivery, flush };
  }

  /**
   * A complete `tool_use` block from Claude (at its `content_block_stop`). With a stream open, push it
   * as `toolcall_start`/`toolcall_end` now (`"stream"`); otherwise it waits for the next stream's flush.
   */
  recordToolUse(call: ToolCall): ToolUseRoute {
    this.assertUsable("recordToolUse");
    const id = parseToolCallId(call.id, "toolCall.id");
    if (this.isDuplicateToolUse(id)) return "duplicate";
    const existing = this.round.get(id);
    const entry = existing ?? this.addEntry(id);
    const from = existing ? stateOf(existing) : null;
    entry.call = { id, name: call.name, arguments: call.arguments };
    if (this.streamOpen) {
      entry.progress = "emitted";
      this.streamCalls.add(entry);
    } else {
      entry.progress = "undelivered";
    }
    this.record(entry, this.streamOpen ? "tool_use_streamed" : "tool_use_undelivered", from);
    this.deadlines.rearm(entry);
    this.watchdog.reevaluate();
    return this.streamOpen ? "stream" : "undelivered";
  }

  /**
   * A `tool_use` block whose arguments cannot go to Pi (Claude streamed JSON that does not parse, or
   * is not an object). Pi never gets the call; its handler, waiting or still to come, is answered with
   * `text` as an error result, so nothing waits on it.
   */
  refuseToolUse(call: { readonly id: string; readonly name: string }, text: string): "refused" | "duplicate" {
    this.assertUsable("refuseToolUse");
    const id = parseToolCallId(call.id, "toolCall.id");
    if (this.isDuplicateToolUse(id)) return "duplicate";
    const existing = this.round.get(id);
    const entry = existing ?? this.addEntry(id);
    const from = existing ? stateOf(existing) : null;
    entry.call = { id, name: call.name, arguments: undefined };
    this.fail(entry, "invalid_arguments", failure(id, "invalid_arguments", text, true));
    this.record(entry, "tool_use_refused", from, { reason: "invalid_arguments" });
    this.watchdog.reevaluate();
    return "refused";
  }

  /**
   * The Pi stream ended: `done` at Claude's `message_stop` (Pi now executes every call on it), `error`
   * when it ended with an error event (its calls become undelivered and are flushed on the next one).
   */
  endStream(outcome: StreamOutcome): StreamEnd {
    this.assertUsable("endStream");
    if (!this.streamOpen) return { forwardedIds: [], undeliveredIds: [] };
    const ended = this.closeStream(outcome);
    this.turnActive = outcome === "done" && this.live.size > 0;
    if (this.turnActive) this.watchdog.reevaluate();
    else this.watchdog.stop();
    return ended;
  }

  /**
   * The MCP handler for `toolCallId` (from `_meta["claudecode/toolUseId"]`). Resolves with Pi's result,
   * or with an error result when the call fails (deadline, ledger abort). Rejects with
   * `HandlerCancelledError` when `signal` aborts, and with `HandlerRefusedError` for a bad or repeated
   * handler. Never waits without a deadline.
   */
  awaitResult(toolCallId: string, signal?: AbortSignal): Promise<ToolResult<M>> {
    const parsed = ToolCallId.safeParse(toolCallId);
    if (!parsed.success) {
      return Promise.reject(
        new HandlerRefusedError(
          "invalid_id",
          `toolCallId must be a non-empty string (the request's _meta["claudecode/toolUseId"]), got ${JSON.stringify(toolCallId)}`,
        ),
      );
    }
    const id = parsed.data;
    if (this.disposed) return Promise.resolve(failure(id, "aborted", abortText("ledger disposed"), false));
    const archived = this.archive.get(id);
    if (archived) return answerArchived(id, archived, this.diagnostics);
    const existing = this.round.get(id);
    if (existing?.settled) return answerSettled(existing, existing.settled, this.diagnostics);
    if (existing?.waiter) {
      this.record(existing, "handler_duplicate", stateOf(existing));
      return Promise.reject(
        new HandlerRefusedError("handler_already_waiting", `a handler already waits for tool call ${id}`),
      );
    }
    if (signal?.aborted) {
      if (existing) this.cancelHandler(existing);
      return Promise.reject(new HandlerCancelledError(id, { cause: signal.reason }));
    }
    if (existing?.queued !== undefined) {
      const message = existing.queued;
      this.settleResolved(existing, message, "result_delivered");
      this.watchdog.reevaluate();
      return Promise.resolve({ kind: "result", toolCallId: id, message });
    }
    return new Promise<ToolResult<M>>((resolve, reject) => {
      const entry = existing ?? this.addEntry(id);
      const from = existing ? stateOf(existing) : null;
      const onAbort = () => {
        if (entry.waiter !== waiter) return;
        this.cancelHandler(entry);
        reject(new HandlerCancelledError(id, { cause: signal?.reason }));
      };
      const waiter: Waiter<M> = {
        resolve,
        reject,
        detach: () => signal?.removeEventListener("abort", onAbort),
      };
      entry.waiter = waiter;
      signal?.addEventListener("abort", onAbort, { once: true });
      this.record(entry, "handler_waiting", from);
      this.deadlines.rearm(entry);
      this.watchdog.reevaluate();
    });
  }

  /**
   * Claude Code is busy in a way no call shows (it is still starting up): the watchdog keeps quiet
   * until `over` settles and counts silence from then on. Whatever bounds `over` bounds the wait.
   */
  expectSilenceUntil(over: Promise<unknown>): void {
    if (this.disposed) return;
    this.expectedSilences += 1;
    this.watchdog.reevaluate();
    const end = () => {
      this.expectedSilences -= 1;
      if (!this.disposed) this.watchdog.reevaluate();
    };
    over.then(end, end);
  }

  /** Any output from Claude Code (stream events, messages): resets the idle watchdog. */
  noteActivity(): void {
    if (!this.disposed) this.watchdog.noteActivity();
  }

  /**
   * Fails every live call with an "Operation aborted" error result (waiting handlers resolve with it at
   * once; later handlers for those ids get it too) and closes the stream. Results arriving later are
   * reported as late. The ledger stays usable for new calls.
   */
  abort(reason?: string): void {
    if (this.disposed) return;
    for (const entry of [...this.live.values()]) {
      const from = stateOf(entry);
      this.fail(entry, "aborted", failure(entry.id, "aborted", abortText(reason), false));
      this.record(entry, "aborted", from, { reason: "aborted", ...(reason ? { detail: reason } : {}) });
    }
    this.streamOpen = false;
    this.streamCalls.clear();
    this.turnActive = false;
    this.watchdog.stop();
  }

  /**
   * Closes the current round of calls (those since the previous check). Quiescent means every call is
   * resolved or failed; otherwise a `tool_result_delivery_mismatch` record goes to the sink and is
   * returned. Settled calls are archived (only their id and outcome are kept) either way.
   */
  checkQuiescence(trigger = "teardown"): QuiescenceResult {
    const entries = [...this.round.values()];
    const quiescent = this.live.size === 0;
    let mismatch: DeliveryMismatchRecord | undefined;
    if (!quiescent) {
      mismatch = mismatchOf(entries, trigger, this.diagnostics.stamp());
      this.diagnostics.emit(mismatch);
    }
    for (const entry of entries) {
      if (!entry.settled) continue;
      this.archive.set(entry.id, {
        state: entry.settled.state,
        ...(entry.settled.state === "failed" ? { reason: entry.settled.reason } : {}),
        delivered: entry.delivered,
      });
      this.round.delete(entry.id);
    }
    return mismatch ? { quiescent: false, mismatch } : { quiescent: true };
  }

  /** The state of one call, or undefined if the ledger never saw its id. */
  stateOf(toolCallId: string): LedgerState | undefined {
    const entry = this.round.get(toolCallId);
    if (entry) return stateOf(entry);
    return this.archive.get(toolCallId)?.state;
  }

  snapshot(): LedgerSnapshot {
    return {
      streamOpen: this.streamOpen,
      turnActive: this.turnActive,
      liveCount: this.live.size,
      entries: [...this.round.values()].map((entry) => ({
        id: entry.id,
        ...(entry.call ? { toolName: entry.call.name } : {}),
        state: stateOf(entry),
        handlerWaiting: entry.waiter !== undefined,
        ...(entry.settled?.state === "failed" ? { reason: entry.settled.reason } : {}),
        ...(entry.deadline ? { deadlineAt: entry.deadline.at } : {}),
      })),
    };
  }

  /** Aborts what is live, cancels every timer. Later handlers get an aborted error at once. */
  dispose(): void {
    if (this.disposed) return;
    this.abort("ledger disposed");
    this.watchdog.dispose();
    this.disposed = true;
  }

  private acceptResult(entry: Entry<M>, message: M): "resolved" | "queued" {
    entry.delivered = true;
    if (entry.waiter) {
      this.settleResolved(entry, message, "result_delivered");
      return "resolved";
    }
    const from = stateOf(entry);
    entry.queued = message;
    this.record(entry, "result_queued", from);
    this.deadlines.rearm(entry);
    return "queued";
  }

  private settleResolved(entry: Entry<M>, message: M, event: LedgerEvent): void {
    const from = stateOf(entry);
    const waiter = entry.waiter;
    entry.waiter = undefined;
    entry.queued = undefined;
    entry.settled = { state: "resolved" };
    this.live.delete(entry.id);
    this.deadlines.clear(entry);
    this.record(entry, event, from);
    waiter?.detach();
    waiter?.resolve({ kind: "result", toolCallId: entry.id, message });
  }

  /** Settles a live entry as failed; a waiting handler resolves with `answer`. The caller records it. */
  private fail(entry: Entry<M>, reason: LedgerFailureReason, answer: ToolResult<M>): void {
    const waiter = entry.waiter;
    entry.waiter = undefined;
    entry.queued = undefined;
    entry.settled = { state: "failed", reason, answer };
    this.live.delete(entry.id);
    this.streamCalls.delete(entry);
    this.deadlines.clear(entry);
    waiter?.detach();
    waiter?.resolve(answer);
  }

  private cancelHandler(entry: Entry<M>): void {
    const from = stateOf(entry);
    const text = `The MCP request for tool call ${entry.id} was cancelled.`;
    const waiter = entry.waiter;
    entry.waiter = undefined;
    waiter?.detach();
    if (!entry.settled)
      this.fail(entry, "handler_cancelled", failure(entry.id, "handler_cancelled", text, false));
    this.record(entry, "handler_cancelled", from, { reason: "handler_cancelled" });
    this.watchdog.reevaluate();
  }

  private closeStream(outcome: StreamOutcome): StreamEnd {
    this.streamOpen = false;
    const forwardedIds: ToolCallId[] = [];
    const undeliveredIds: ToolCallId[] = [];
    for (const entry of this.streamCalls) {
      if (entry.settled || entry.progress !== "emitted") continue;
      const from = stateOf(entry);
      entry.progress = outcome === "done" ? "forwarded" : "undelivered";
      (outcome === "done" ? forwardedIds : undeliveredIds).push(entry.id);
      this.record(entry, outcome === "done" ? "forwarded" : "stream_failed", from);
    }
    this.streamCalls.clear();
    // Deadlines depend on whether a stream is open (a nameless handler's grace starts when it closes).
    for (const entry of this.live.values()) this.deadlines.rearm(entry);
    return { forwardedIds, undeliveredIds };
  }

  /** A `tool_use` for an id that already has its call (this round or archived): recorded as a repeat. */
  private isDuplicateToolUse(id: ToolCallId): boolean {
    const archived = this.archive.get(id);
    if (archived) {
      this.diagnostics.archivedTransition(id, archived, "tool_use_duplicate");
      return true;
    }
    const existing = this.round.get(id);
    if (existing && (existing.progress !== "unseen" || existing.settled)) {
      this.record(existing, "tool_use_duplicate", stateOf(existing));
      return true;
    }
    return false;
  }

  private addEntry(id: ToolCallId): Entry<M> {
    const entry = newEntry<M>(id);
    this.round.set(id, entry);
    this.live.set(id, entry);
    return entry;
  }

  private expire(entry: Entry<M>, phase: DeadlinePhase): void {
    const deadline = entry.deadline;
    if (entry.settled || deadline?.phase !== phase) return;
    const waitedMs = this.clock.now() - deadline.since;
    const from = stateOf(entry);
    const unclaimed = phase === "queued" && entry.queued !== undefined;
    const reason: LedgerFailureReason = unclaimed ? "result_unclaimed" : "deadline_expired";
    const answer: ToolResult<M> = unclaimed
      ? { kind: "result", toolCallId: entry.id, message: entry.queued! }
      : failure(entry.id, "deadline_expired", expiryText(phase, entry.id, waitedMs), !piMayHaveRun(phase));
    this.fail(entry, reason, answer);
    this.record(entry, "deadline_expired", from, {
      reason,
      detail: `${phase} deadline expired after ${formatDuration(waitedMs)}`,
    });
    this.watchdog.reevaluate();
  }

  private reportStall(stall: StreamStall): void {
    this.diagnostics.emit({
      type: "stream_idle_timeout",
      ...this.diagnostics.stamp(),
      timeoutMs: stall.timeoutMs,
      idleMs: stall.idleMs,
      message: stall.message,
    });
    this.options.onStall?.(stall);
  }

  private record(
    entry: Entry<M>,
    event: LedgerEvent,
    from: LedgerState | null,
    extra: { reason?: LedgerFailureReason; detail?: string } = {},
  ): void {
    this.diagnostics.transition(entry, event, from, extra);
  }

  private assertUsable(method: string): void {
    if (this.disposed) throw new LedgerDisposedError(method);
  }
}
