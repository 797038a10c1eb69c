import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";
import { ClaudeTurnReceipt } from "./pi-session.js";

/**
 * Records of the Pi provider's tool-call ledger (`@bridgeworks/delivery-reconciler`). Claude Code emits
 * `tool_use` blocks, Pi executes them, and a later `streamSimple` context carries the results back; every
 * call and result is paired strictly by this id (`_meta["claudecode/toolUseId"]` on the MCP side).
 */
export const ToolCallId = lazySchema(() => z.string().min(1, "tool call id must not be empty"));
export type ToolCallId = z.infer<typeof ToolCallId>;

const IsoTimestamp = lazySchema(() =>
  z.iso.datetime({ offset: true, error: "timestamp must be an ISO 8601 date-time" }),
);
const Count = lazySchema(() => z.number().int().nonnegative());
const IdList = lazySchema(() => z.array(ToolCallId));

/**
 * What every diagnostic record carries after its `type`: when it was written, and who it is about:
 * the Pi session and, when the app has several, which Claude Code query.
 */
const recordContext = {
  at: IsoTimestamp,
  sessionId: z.string().min(1, "sessionId must not be empty").optional(),
  queryId: z.string().min(1, "queryId must not be empty").optional(),
};

/**
 * Where one tool call stands.
 * - `emitted`: seen in Claude's message while a Pi stream is open; Pi gets it when that stream ends.
 * - `forwarded`: handed to Pi (the stream ended with `done`); Pi is executing it.
 * - `handler_waiting`: Claude Code's MCP handler for the id waits for the result.
 * - `result_queued`: Pi's result arrived before the handler; it waits for the handler.
 * - `undelivered`: seen while no Pi stream was open; flushed first on the next stream.
 * - `resolved`: the handler received Pi's result. Terminal.
 * - `failed`: settled without a result reaching a handler (deadline, abort, cancelled handler, refused
 *   arguments). Terminal.
 */
export const LedgerState = lazySchema(() =>
  z.enum(["emitted", "forwarded", "handler_waiting", "result_queued", "undelivered", "resolved", "failed"]),
);
export type LedgerState = z.infer<typeof LedgerState>;

export const TerminalLedgerState = lazySchema(() => LedgerState.extract(["resolved", "failed"]));
export type TerminalLedgerState = z.infer<typeof TerminalLedgerState>;

/** What moved an entry of the ledger. */
export const LedgerEvent = lazySchema(() =>
  z.enum([
    /** A `tool_use` block arrived while a Pi stream was open. */
    "tool_use_streamed",
    /** A `tool_use` block arrived while no Pi stream was open. */
    "tool_use_undelivered",
    /** A `tool_use` block repeated an id the ledger already had; ignored. */
    "tool_use_duplicate",
    /** A `tool_use` block whose arguments Pi cannot be given (not a JSON object): never forwarded. */
    "tool_use_refused",
    /** An undelivered call was handed to a new Pi stream. */
    "flushed",
    /** The Pi stream carrying the call ended with `done`: Pi executes it. */
    "forwarded",
    /** The Pi stream carrying the call ended with an error: Pi never got it. */
    "stream_failed",
    "handler_waiting",
    /** A second handler for an id whose handler already waits; refused. */
    "handler_duplicate",
    /** A handler for an already settled id; answered at once with the stored answer. */
    "handler_after_settlement",
    /** Claude Code cancelled the handler (its MCP request was aborted). */
    "handler_cancelled",
    "result_queued",
    "result_delivered",
    /** The call was handed to Pi but a later context did not carry its result. */
    "missing_from_context",
    "deadline_expired",
    "aborted",
  ]),
);
export type LedgerEvent = z.infer<typeof LedgerEvent>;

/** Why an entry ended `failed`. */
export const LedgerFailureReason = lazySchema(() =>
  z.enum([
    "deadline_expired",
    /** Its result stayed queued past its deadline with no handler; a late handler still gets that result. */
    "result_unclaimed",
    "handler_cancelled",
    "aborted",
    /** Claude's arguments were not a JSON object; the call was never forwarded to Pi. */
    "invalid_arguments",
  ]),
);
export type LedgerFailureReason = z.infer<typeof LedgerFailureReason>;

/** One record per change of one ledger entry. */
export const LedgerTransitionRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("tool_call_ledger_transition"),
    ...recordContext,
    toolCallId: ToolCallId,
    /** The tool's name once a `tool_use` block named it; a handler can arrive first. */
    toolName: z.string().min(1, "toolName must not be empty").optional(),
    event: LedgerEvent,
    /** The state before the event; null when the event created the entry. */
    from: LedgerState.nullable(),
    to: LedgerState,
    handlerWaiting: z.boolean(),
    reason: LedgerFailureReason.optional(),
    /** A sentence for a human reading the log, e.g. which deadline expired after how long. */
    detail: z.string().optional(),
  }),
);
export type LedgerTransitionRecord = z.infer<typeof LedgerTransitionRecord>;

/**
 * How a delivery examined `context.messages`: `incremental` from the watermark of the previous scan,
 * `full` from the start (first context with live calls, or the context got shorter or was rewritten),
 * `skipped` when a first context arrived with nothing to deliver (only its tail was read).
 */
export const ContextScanMode = lazySchema(() => z.enum(["incremental", "full", "skipped"]));
export type ContextScanMode = z.infer<typeof ContextScanMode>;

export const ContextRescanReason = lazySchema(() => z.enum(["context_shorter", "context_rewritten"]));
export type ContextRescanReason = z.infer<typeof ContextRescanReason>;

export const ContextScanStats = lazySchema(() =>
  z.strictObject({
    mode: ContextScanMode,
    /** First index examined and the context length; messages in [from, length) were read. */
    from: Count,
    length: Count,
    messagesExamined: Count,
  }),
);
export type ContextScanStats = z.infer<typeof ContextScanStats>;

/**
 * How the results in one context were classified.
 * - `extractedIds`: delivered from the context's tail (after its last assistant message).
 * - `presentButNotExtractedIds`: delivered from earlier in the context (a tail-only reader misses them).
 * - `missingFromContextIds`: handed to Pi, yet no result in the context.
 * - `duplicateIds`: a result for an id already resolved, or a second result in the context; skipped.
 * - `lateIds`: a result for an id that already failed (deadline, abort); skipped.
 * - `foreignIds`: a result that is not this ledger's business: its call is in the context but was
 *   never recorded (a turn another provider served), or, in a context read from the start, it comes
 *   before this ledger's first call (history, e.g. a result whose call compaction removed); skipped.
 * - `unknownIds`: a result for an id this ledger never recorded and the context never called: refused.
 */
export const ToolResultDeliveryRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("tool_result_delivery"),
    ...recordContext,
    scan: ContextScanStats,
    extractedIds: IdList,
    presentButNotExtractedIds: IdList,
    missingFromContextIds: IdList,
    duplicateIds: IdList,
    lateIds: IdList,
    foreignIds: IdList,
    unknownIds: IdList,
    /** Of the delivered ids: those whose waiting handler was answered, and those queued for their handler. */
    resolvedIds: IdList,
    queuedIds: IdList,
    /** `toolResult` messages without a usable `toolCallId`; never delivered. */
    malformedCount: Count,
  }),
);
export type ToolResultDeliveryRecord = z.infer<typeof ToolResultDeliveryRecord>;

/** The context was not an extension of the one scanned before (e.g. after compaction): scanned in full. */
export const ContextRescanRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("tool_result_context_rescan"),
    ...recordContext,
    reason: ContextRescanReason,
    previousWatermark: Count,
    length: Count,
  }),
);
export type ContextRescanRecord = z.infer<typeof ContextRescanRecord>;

/** The idle watchdog saw a genuine stall: no output and nothing pending for `timeoutMs`. */
export const StreamIdleTimeoutRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("stream_idle_timeout"),
    ...recordContext,
    timeoutMs: z.number().int().positive(),
    idleMs: Count,
    /** The error text handed to Pi; it matches Pi's auto-retry pattern. */
    message: z.string().min(1),
  }),
);
export type StreamIdleTimeoutRecord = z.infer<typeof StreamIdleTimeoutRecord>;

/**
 * Written by the quiescence check when a round of calls did not settle cleanly: something still waits,
 * is queued, undelivered or executing. `expected` = every call of the round; `delivered` = Pi's result
 * reached the ledger; `resolved` = a handler received it; `waiting` = handlers still waiting.
 */
export const DeliveryMismatchRecord = lazySchema(() =>
  z
    .strictObject({
      type: z.literal("tool_result_delivery_mismatch"),
      ...recordContext,
      /** Why the check ran, e.g. `teardown` or `turn_end`. */
      trigger: z.string().min(1, "trigger must not be empty"),
      expectedCount: Count,
      deliveredCount: Count,
      resolvedCount: Count,
      waitingCount: Count,
      expectedIds: IdList,
      deliveredIds: IdList,
      resolvedIds: IdList,
      waitingIds: IdList,
      queuedIds: IdList,
      undeliveredIds: IdList,
      /** Seen on a Pi stream that has not ended yet. */
      emittedIds: IdList,
      /** Handed to Pi, no result yet. */
      executingIds: IdList,
      failedIds: IdList,
    })
    .superRefine((record, context) => {
      const countsAndLists = [
        ["expectedCount", record.expectedCount, record.expectedIds],
        ["deliveredCount", record.deliveredCount, record.deliveredIds],
        ["resolvedCount", record.resolvedCount, record.resolvedIds],
        ["waitingCount", record.waitingCount, record.waitingIds],
      ] as const;
      for (const [field, count, ids] of countsAndLists) {
        if (count !== ids.length) {
          context.addIssue({
            code: "custom",
            path: [field],
            message: `${field} must equal the number of listed ids (${ids.length})`,
          });
        }
      }
    }),
);
export type DeliveryMismatchRecord = z.infer<typeof DeliveryMismatchRecord>;

/** Every record the ledger writes to its diagnostic sink (the app appends them to a JSONL file). */
export const DeliveryDiagnosticRecord = lazySchema(() =>
  z.discriminatedUnion("type", [
    LedgerTransitionRecord,
    ToolResultDeliveryRecord,
    ContextRescanRecord,
    StreamIdleTimeoutRecord,
    DeliveryMismatchRecord,
  ]),
);
export type DeliveryDiagnosticRecord = z.infer<typeof DeliveryDiagnosticRecord>;

/*
 * The Pi provider's own records, beside the ledger's in the same JSONL log: how its Claude Code query
 * started and ended, and what Claude Code reported along the way. Ids and counts only, never content.
 */

/** Calls seen while no Pi stream was open, handed to Pi at the start of the next one. */
export const UndeliveredToolCallsFlushedRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("undelivered_tool_calls_flushed"),
    ...recordContext,
    ids: IdList.min(1, "ids must not be empty"),
  }),
);
export type UndeliveredToolCallsFlushedRecord = z.infer<typeof UndeliveredToolCallsFlushedRecord>;

/** A Claude Code query began: resumed by Claude's session id (`rewound` to an earlier turn) or fresh. */
export const ClaudeQueryStartedRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("claude_query_started"),
    ...recordContext,
    resumed: z.boolean(),
    rewound: z.boolean(),
    /** How many of Pi's messages were told to Claude in the first input (a transcript when not resumed). */
    replayedMessages: Count,
    /** Started ahead of a prompt (a Pi session selected a claude-code model); nothing was told yet. */
    warm: z.literal(true).optional(),
    /** Started by the session this one replaced (`/new`), for this one, before this one existed. */
    successor: z.literal(true).optional(),
  }),
);
export type ClaudeQueryStartedRecord = z.infer<typeof ClaudeQueryStartedRecord>;

/**
 * How the warm-up of a query started ahead of its first prompt ended: `blocked` by the query's own
 * hook as meant (`ms` from sending it to its end), `skipped` (`reason`), or `answered`: the model saw
 * it, and the query was ended so that nothing of it reaches Pi's conversation.
 */
export const ClaudeWarmUpRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("claude_warm_up"),
    ...recordContext,
    outcome: z.enum(["blocked", "skipped", "answered"]),
    ms: z.number().nonnegative().optional(),
    reason: z.string().min(1, "reason must not be empty").max(200).optional(),
  }),
);
export type ClaudeWarmUpRecord = z.infer<typeof ClaudeWarmUpRecord>;

/** Claude Code ended its query on its own (exit, crash); `detail` is the tail of what it said. */
export const ClaudeQueryEndedRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("claude_query_ended"),
    ...recordContext,
    detail: z.string().max(500),
  }),
);
export type ClaudeQueryEndedRecord = z.infer<typeof ClaudeQueryEndedRecord>;

/** Claude Code retries an API request; `status` is null for a failure without an HTTP response. */
export const ClaudeApiRetryRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("claude_api_retry"),
    ...recordContext,
    status: z.number().int().nullable(),
  }),
);
export type ClaudeApiRetryRecord = z.infer<typeof ClaudeApiRetryRecord>;

/** Claude Code's rate-limit event, e.g. `allowed_warning` or `rejected`, with its window when it named one. */
export const ClaudeRateLimitRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("claude_rate_limit"),
    ...recordContext,
    status: z.string().min(1, "status must not be empty"),
    /** e.g. `five_hour`, `seven_day`. */
    rateLimitType: z.string().min(1, "rateLimitType must not be empty").optional(),
    resetsAt: IsoTimestamp.optional(),
    /** The window's use, 0..1. */
    utilization: z.number().min(0).max(1).optional(),
    /** Extra usage's own status (`allowed`, `allowed_warning`, `rejected`), when Claude Code named it. */
    overageStatus: z.string().min(1, "overageStatus must not be empty").optional(),
    /** Claude Code's `isUsingOverage`: the plan's window is used up and requests draw extra usage. */
    usingOverage: z.literal(true).optional(),
  }),
);
export type ClaudeRateLimitRecord = z.infer<typeof ClaudeRateLimitRecord>;

/** Claude streamed a content block while no Pi stream was open to carry it (it is not shown to Pi). */
export const ContentWithoutPiStreamRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("content_without_pi_stream"),
    ...recordContext,
    block: z.string().min(1, "block must not be empty"),
  }),
);
export type ContentWithoutPiStreamRecord = z.infer<typeof ContentWithoutPiStreamRecord>;

/**
 * A request the spending guard (`CLAUDE_BRIDGE_SPEND=plan-only`) refused: Claude Code said requests now
 * draw extra usage, so nothing was sent; the window and its reset when Claude Code named them.
 */
export const ClaudeSpendRefusedRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("claude_spend_refused"),
    ...recordContext,
    rateLimitType: z.string().min(1, "rateLimitType must not be empty").optional(),
    resetsAt: IsoTimestamp.optional(),
  }),
);
export type ClaudeSpendRefusedRecord = z.infer<typeof ClaudeSpendRefusedRecord>;

/**
 * A request made while Pi ran a tool, to keep Claude Code's prompt cache alive (a side question through
 * the same Claude Code process): `sent` (answered after `ms`), `failed` (`detail`), `refused` by the
 * spending guard, or `unavailable` (this Agent SDK has no side questions).
 */
export const ClaudeKeepWarmRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("claude_keep_warm"),
    ...recordContext,
    outcome: z.enum(["sent", "failed", "refused", "unavailable"]),
    ms: z.number().nonnegative().optional(),
    detail: z.string().min(1, "detail must not be empty").max(500).optional(),
  }),
);
export type ClaudeKeepWarmRecord = z.infer<typeof ClaudeKeepWarmRecord>;

/** One Pi run's receipt, as also recorded in Pi's session file (`ClaudeTurnReceipt`). */
export const ClaudeTurnReceiptRecord = lazySchema(() =>
  z.strictObject({
    type: z.literal("claude_turn_receipt"),
    ...recordContext,
    receipt: ClaudeTurnReceipt,
  }),
);
export type ClaudeTurnReceiptRecord = z.infer<typeof ClaudeTurnReceiptRecord>;

/** Every record of the Pi provider's diagnostics log: the ledger's and the provider's own. */
export const ClaudeBridgeDiagnosticRecord = lazySchema(() =>
  z.discriminatedUnion("type", [
    ...DeliveryDiagnosticRecord.options,
    UndeliveredToolCallsFlushedRecord,
    ClaudeQueryStartedRecord,
    ClaudeWarmUpRecord,
    ClaudeQueryEndedRecord,
    ClaudeApiRetryRecord,
    ClaudeRateLimitRecord,
    ContentWithoutPiStreamRecord,
    ClaudeSpendRefusedRecord,
    ClaudeTurnReceiptRecord,
    ClaudeKeepWarmRecord,
  ]),
);
export type ClaudeBridgeDiagnosticRecord = z.infer<typeof ClaudeBridgeDiagnosticRecord>;
