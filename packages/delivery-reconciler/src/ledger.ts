import {
  type DeliveryDiagnosticRecord,
  type DeliveryMismatchRecord,
  type LedgerEvent,
  type LedgerFailureReason,
  type LedgerState,
  ToolCallId,
  type ToolResultDeliveryRecord,
} from "@bridgeworks/protocol";
import type { Clock } from "./clock.js";
import { ContextIndex } from "./context-index.js";
import {
  abortText,
  type DeadlinePhase,
  expiryText,
  type LedgerDeadlines,
  phaseDurationMs,
  piMayHaveRun,
  resolveDeadlines,
} from "./deadlines.js";
import { HandlerCancelledError, HandlerRefusedError, LedgerDisposedError } from "./errors.js";
import { DEFAULT_IDLE_TIMEOUT_MS, MAX_TIMER_DELAY_MS } from "./idle-timeout.js";
import { IdleWatchdog, type StreamStall } from "./idle-watchdog.js";
import { formatDuration } from "./stall-message.js";
import type { ContextMessage, DiagnosticSink, FailedToolResult, ToolCall, ToolResult } from "./types.js";

export interface ToolCallLedgerOptions {
  readonly clock: Clock;
  /** Receives every diagnostic record; the app appends them to its JSONL log. */
  readonly sink: DiagnosticSink;
  /** Idle watchdog timeout (see `parseIdleTimeout`); 0 turns it off. Default 90 s. */
  readonly idleTimeoutMs?: number;
  /** A genuine stall: close Claude Code and end the Pi stream with `stall.message` as its error. */
  readonly onStall?: (stall: StreamStall) => void;
  readonly deadlines?: Partial<LedgerDeadlines>;
  readonly sessionId?: string;
  readonly queryId?: string;
  /** A sink that throws never breaks delivery; its error lands here. */
  readonly onSinkError?: (error: unknown, record: DeliveryDiagnosticRecord) => void;
}

/** Where a `tool_use` went: onto the open Pi stream, into the undelivered set, or nowhere (id known). */
export type ToolUseRoute = "stream" | "undelivered" | "duplicate";

/** `done`: the stream ended with a `done` event, so Pi executes its calls. `error`: Pi never gets them. */
export type StreamOutcome = "done" | "error";

export interface StreamStart {
  /** How the context's results were classified; the same record went to the sink. */
  readonly delivery: ToolResultDeliveryRecord;
  /**
   * Calls Claude emitted while no Pi stream was open. Push each as `toolcall_start`/`toolcall_end`
   * first, then end this stream with `done(toolUse)` and `endStream("done")`.
   */
  readonly flush: readonly ToolCall[];
}

export interface StreamEnd {
  readonly forwardedIds: readonly ToolCallId[];
  readonly undeliveredIds: readonly ToolCallId[];
}

export type QuiescenceResult =
  | { readonly quiescent: true }
  | { readonly quiescent: false; readonly mismatch: DeliveryMismatchRecord };

export interface LedgerEntryView {
  readonly id: ToolCallId;
  readonly toolName?: string;
  readonly state: LedgerState;
  readonly handlerWaiting: boolean;
  readonly reason?: LedgerFailureReason;
  /** When the current waiting state expires (clock time), if it waits. */
  readonly deadlineAt?: number;
}

export interface LedgerSnapshot {
  readonly streamOpen: boolean;
  readonly turnActive: boolean;
  /** Calls not yet resolved or failed: while any exist the idle watchdog is suppressed. */
  readonly liveCount: number;
  /** The calls of the current round (since the last quiescence check), in arrival order. */
  readonly entries: readonly LedgerEntryView[];
}

type CallProgress = "unseen" | "emitted" | "undelivered" | "forwarded";

interface Waiter<M extends ContextMessage> {
  resolve(result: ToolResult<M>): void;
  reject(error: Error): void;
  detach(): void;
}

type Settlement<M extends ContextMessage> =
  | { readonly state: "resolved" }
  | { readonly state: "failed"; readonly reason: LedgerFailureReason; readonly answer: ToolResult<M> };

interface Deadline {
  readonly phase: DeadlinePhase;
  readonly since: number;
  readonly at: number;
  readonly handle: unknown;
}

interface Entry<M extends ContextMessage> {
  readonly id: ToolCallId;
  call: ToolCall | undefined;
  progress: CallProgress;
  waiter: Waiter<M> | undefined;
  /** Pi's result, held until the handler arrives. */
  queued: M | undefined;
  /** Pi's result reached the ledger (queued or handed over). */
  delivered: boolean;
  /** Reported missing from a context once; its deadline shortened. */
  missing: boolean;
  settled: Settlement<M> | undefined;
  deadline: Deadline | undefined;
}

/** What is kept of a call once a quiescence check closed its round: enough to classify repeats. */
interface ArchivedEntry {
  readonly state: "resolved" | "failed";
  readonly reason?: LedgerFailureReason;
  readonly delivered: boolean;
}

/**
 * The ledger of one Claude Code query (or one Pi session) served by Pi's tools. It pairs Claude's
 * `tool_use` blocks, the MCP handlers waiting for them, and Pi's `toolResult` messages strictly by tool
 * call id. See the package README for the call sequence.
 */
export class ToolCallLedger<M extends ContextMessage = ContextMessage> {
  private readonly clock: Clock;
  private readonly deadlines: LedgerDeadlines;
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
    this.deadlines = resolveDeadlines(options.deadlines);
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
    const delivery = this.deliver(messages);
    const flush: ToolCall[] = [];
    for (const entry of this.live.values()) {
      if (entry.progress === "undelivered" && !entry.delivered) {
        const from = stateOf(entry);
        entry.progress = "emitted";
        this.streamCalls.add(entry);
        flush.push(entry.call!);
        this.record(entry, "flushed", from);
      }
      this.rearm(entry);
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
    const existing = this.round.get(id);
    const archived = this.archive.get(id);
    if (archived) {
      this.recordArchived(id, archived, "tool_use_duplicate");
      return "duplicate";
    }
    if (existing && (existing.progress !== "unseen" || existing.settled)) {
      this.record(existing, "tool_use_duplicate", stateOf(existing));
      return "duplicate";
    }
    const entry = existing ?? this.newEntry(id);
    const from = existing ? stateOf(existing) : null;
    entry.call = { id, name: call.name, arguments: call.arguments };
    if (this.streamOpen) {
      entry.progress = "emitted";
      this.streamCalls.add(entry);
    } else {
      entry.progress = "undelivered";
    }
    this.record(entry, this.streamOpen ? "tool_use_streamed" : "tool_use_undelivered", from);
    this.rearm(entry);
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
    const archived = this.archive.get(id);
    if (archived) {
      this.recordArchived(id, archived, "tool_use_duplicate");
      return "duplicate";
    }
    const existing = this.round.get(id);
    if (existing && (existing.progress !== "unseen" || existing.settled)) {
      this.record(existing, "tool_use_duplicate", stateOf(existing));
      return "duplicate";
    }
    const entry = existing ?? this.newEntry(id);
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
    if (archived) return this.answerArchived(id, archived);
    const existing = this.round.get(id);
    if (existing?.settled) return this.answerSettled(existing, existing.settled);
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
      const entry = existing ?? this.newEntry(id);
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
      this.rearm(entry);
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
    const ids = (keep: (entry: Entry<M>) => boolean) => entries.filter(keep).map((entry) => entry.id);
    const isLive = (entry: Entry<M>) => entry.settled === undefined;
    const quiescent = this.live.size === 0;
    let mismatch: DeliveryMismatchRecord | undefined;
    if (!quiescent) {
      const expectedIds = ids(() => true);
      const deliveredIds = ids((entry) => entry.delivered);
      const resolvedIds = ids((entry) => entry.settled?.state === "resolved");
      const waitingIds = ids((entry) => entry.waiter !== undefined);
      mismatch = {
        type: "tool_result_delivery_mismatch",
        ...this.stamp(),
        trigger,
        expectedCount: expectedIds.length,
        deliveredCount: deliveredIds.length,
        resolvedCount: resolvedIds.length,
        waitingCount: waitingIds.length,
        expectedIds,
        deliveredIds,
        resolvedIds,
        waitingIds,
        queuedIds: ids((entry) => isLive(entry) && entry.queued !== undefined),
        undeliveredIds: ids((entry) => isLive(entry) && !entry.delivered && entry.progress === "undelivered"),
        emittedIds: ids((entry) => isLive(entry) && !entry.delivered && entry.progress === "emitted"),
        executingIds: ids((entry) => isLive(entry) && !entry.delivered && entry.progress === "forwarded"),
        failedIds: ids((entry) => entry.settled?.state === "failed"),
      };
      this.emit(mismatch);
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

  private deliver(messages: readonly M[]): ToolResultDeliveryRecord {
    const extractedIds: ToolCallId[] = [];
    const presentButNotExtractedIds: ToolCallId[] = [];
    const resolvedIds: ToolCallId[] = [];
    const queuedIds: ToolCallId[] = [];
    const duplicateIds = new Set<ToolCallId>();
    const lateIds = new Set<ToolCallId>();
    const foreignIds = new Set<ToolCallId>();
    const unknownIds = new Set<ToolCallId>();
    const deliveredAt: { id: ToolCallId; index: number }[] = [];
    const seenInThisContext = new Set<string>();
    let malformedCount = 0;
    // Reading from the start (first context, compaction), everything before this ledger's first call
    // is history: a result there whose call was compacted away is not an unknown delivery.
    let pastHistory = true;
    const knows = (id: string) => this.round.has(id) || this.archive.has(id);

    const walk = this.context.walk(messages, this.live.size > 0, {
      start: (mode) => {
        pastHistory = mode === "incremental";
      },
      toolCall: (id) => {
        if (knows(id)) pastHistory = true;
        else this.foreignCallIds.add(id);
      },
      toolResult: (id, message, index) => {
        if (knows(id)) pastHistory = true;
        if (seenInThisContext.has(id)) {
          duplicateIds.add(id);
          return;
        }
        seenInThisContext.add(id);
        const entry = this.round.get(id);
        if (entry && !entry.settled) {
          if (entry.delivered) {
            duplicateIds.add(id);
            return;
          }
          deliveredAt.push({ id, index });
          (this.acceptResult(entry, message) === "resolved" ? resolvedIds : queuedIds).push(id);
          return;
        }
        const settled = entry
          ? { state: entry.settled!.state, delivered: entry.delivered }
          : this.archive.get(id);
        if (settled) (settled.state === "resolved" || settled.delivered ? duplicateIds : lateIds).add(id);
        else if (this.foreignCallIds.has(id) || !pastHistory) foreignIds.add(id);
        else unknownIds.add(id);
      },
      malformedResult: () => {
        malformedCount++;
      },
    });

    if (walk.rescan) {
      this.emit({
        type: "tool_result_context_rescan",
        ...this.stamp(),
        reason: walk.rescan.reason,
        previousWatermark: walk.rescan.previousWatermark,
        length: walk.length,
      });
    }
    for (const { id, index } of deliveredAt) {
      (index > walk.lastAssistantIndex ? extractedIds : presentButNotExtractedIds).push(id);
    }
    const missingFromContextIds: ToolCallId[] = [];
    for (const entry of this.live.values()) {
      if (entry.progress !== "forwarded" || entry.delivered) continue;
      missingFromContextIds.push(entry.id);
      if (!entry.missing) {
        entry.missing = true;
        this.record(entry, "missing_from_context", stateOf(entry));
        this.rearm(entry);
      }
    }
    const record: ToolResultDeliveryRecord = {
      type: "tool_result_delivery",
      ...this.stamp(),
      scan: {
        mode: walk.mode,
        from: walk.from,
        length: walk.length,
        messagesExamined: walk.messagesExamined,
      },
      extractedIds,
      presentButNotExtractedIds,
      missingFromContextIds,
      duplicateIds: [...duplicateIds],
      lateIds: [...lateIds],
      foreignIds: [...foreignIds],
      unknownIds: [...unknownIds],
      resolvedIds,
      queuedIds,
      malformedCount,
    };
    this.emit(record);
    return record;
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
    this.rearm(entry);
    return "queued";
  }

  private settleResolved(entry: Entry<M>, message: M, event: LedgerEvent): void {
    const from = stateOf(entry);
    const waiter = entry.waiter;
    entry.waiter = undefined;
    entry.queued = undefined;
    entry.settled = { state: "resolved" };
    this.live.delete(entry.id);
    this.clearDeadline(entry);
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
    this.clearDeadline(entry);
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

  private answerSettled(entry: Entry<M>, settled: Settlement<M>): Promise<ToolResult<M>> {
    this.record(entry, "handler_after_settlement", stateOf(entry));
    if (settled.state === "failed") return Promise.resolve(settled.answer);
    return Promise.reject(
      new HandlerRefusedError(
        "already_resolved",
        `tool call ${entry.id} was already answered with its result`,
      ),
    );
  }

  private answerArchived(id: ToolCallId, archived: ArchivedEntry): Promise<ToolResult<M>> {
    this.recordArchived(id, archived, "handler_after_settlement");
    if (archived.state === "resolved") {
      return Promise.reject(
        new HandlerRefusedError("already_resolved", `tool call ${id} was already answered with its result`),
      );
    }
    const reason = archived.reason ?? "deadline_expired";
    return Promise.resolve(
      failure(id, reason, `Tool call ${id} already failed (${reason}); its result is no longer held.`, false),
    );
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
    for (const entry of this.live.values()) this.rearm(entry);
    return { forwardedIds, undeliveredIds };
  }

  private newEntry(id: ToolCallId): Entry<M> {
    const entry: Entry<M> = {
      id,
      call: undefined,
      progress: "unseen",
      waiter: undefined,
      queued: undefined,
      delivered: false,
      missing: false,
      settled: undefined,
      deadline: undefined,
    };
    this.round.set(id, entry);
    this.live.set(id, entry);
    return entry;
  }

  private phaseOf(entry: Entry<M>): DeadlinePhase | undefined {
    if (entry.settled) return undefined;
    if (entry.queued !== undefined) return "queued";
    switch (entry.progress) {
      case "unseen":
        return this.streamOpen ? "stranded_streaming" : "stranded";
      case "emitted":
        return "emitted";
      case "undelivered":
        return "undelivered";
      case "forwarded":
        return entry.missing ? "missing" : "executing";
    }
  }

  /** Arms the deadline of the entry's current waiting state; a state it already waits in keeps its own. */
  private rearm(entry: Entry<M>): void {
    const phase = this.phaseOf(entry);
    if (entry.deadline?.phase === phase) return;
    const previous = entry.deadline;
    this.clearDeadline(entry);
    if (phase === undefined) return;
    const now = this.clock.now();
    let at = now + phaseDurationMs(phase, this.deadlines);
    // Learning that the result is missing only ever shortens the wait.
    if (phase === "missing" && previous && previous.at < at) at = previous.at;
    const handle = this.clock.setTimeout(() => this.expire(entry, phase), at - now);
    entry.deadline = { phase, since: now, at, handle };
  }

  private clearDeadline(entry: Entry<M>): void {
    if (!entry.deadline) return;
    this.clock.clearTimeout(entry.deadline.handle);
    entry.deadline = undefined;
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
    this.emit({
      type: "stream_idle_timeout",
      ...this.stamp(),
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
    this.emit({
      type: "tool_call_ledger_transition",
      ...this.stamp(),
      toolCallId: entry.id,
      ...(entry.call?.name ? { toolName: entry.call.name } : {}),
      event,
      from,
      to: stateOf(entry),
      handlerWaiting: entry.waiter !== undefined,
      ...extra,
    });
  }

  private recordArchived(id: ToolCallId, archived: ArchivedEntry, event: LedgerEvent): void {
    this.emit({
      type: "tool_call_ledger_transition",
      ...this.stamp(),
      toolCallId: id,
      event,
      from: archived.state,
      to: archived.state,
      handlerWaiting: false,
      ...(archived.reason ? { reason: archived.reason } : {}),
    });
  }

  private stamp(): { at: string; sessionId?: string; queryId?: string } {
    return {
      at: new Date(this.clock.now()).toISOString(),
      ...(this.options.sessionId ? { sessionId: this.options.sessionId } : {}),
      ...(this.options.queryId ? { queryId: this.options.queryId } : {}),
    };
  }

  private emit(record: DeliveryDiagnosticRecord): void {
    try {
      this.options.sink(record);
    } catch (error) {
      this.options.onSinkError?.(error, record);
    }
  }

  private assertUsable(method: string): void {
    if (this.disposed) throw new LedgerDisposedError(method);
  }
}

/** A result present beats everything; then "undelivered" (the failure mode worth seeing), the handler. */
function stateOf<M extends ContextMessage>(entry: Entry<M>): LedgerState {
  if (entry.settled) return entry.settled.state;
  if (entry.queued !== undefined) return "result_queued";
  if (entry.progress === "undelivered") return "undelivered";
  if (entry.waiter || entry.progress === "unseen") return "handler_waiting";
  return entry.progress === "forwarded" ? "forwarded" : "emitted";
}

function failure(
  id: ToolCallId,
  reason: LedgerFailureReason,
  text: string,
  retryable: boolean,
): FailedToolResult {
  return { kind: "error", toolCallId: id, reason, text, retryable };
}

function parseToolCallId(value: unknown, field: string): ToolCallId {
  const parsed = ToolCallId.safeParse(value);
  if (!parsed.success)
    throw new TypeError(`${field} must be a non-empty string, got ${JSON.stringify(value)}`);
  return parsed.data;
}
