import { describe, expect, test } from "vitest";
import {
  ClaudeBridgeDiagnosticRecord,
  DeliveryDiagnosticRecord,
  DeliveryMismatchRecord,
  LedgerState,
  LedgerTransitionRecord,
  ToolCallId,
  ToolResultDeliveryRecord,
} from "../src/index.js";
import { failedPaths, firstMessage } from "./issues.js";

const at = "2026-01-01T00:00:00.000Z";

/** The incident of seeds/pi-claude-bridge-delivery-fixes.md: two calls, one result, one handler waiting. */
const mismatch = {
  type: "tool_result_delivery_mismatch",
  at,
  sessionId: "0196f3a4-7c1e-7b1a-9f00-1234567890ab",
  trigger: "teardown",
  expectedCount: 2,
  deliveredCount: 1,
  resolvedCount: 1,
  waitingCount: 1,
  expectedIds: ["toolu_01A", "toolu_01B"],
  deliveredIds: ["toolu_01A"],
  resolvedIds: ["toolu_01A"],
  waitingIds: ["toolu_01B"],
  queuedIds: [],
  undeliveredIds: [],
  emittedIds: [],
  executingIds: ["toolu_01B"],
  failedIds: [],
};

const transition = {
  type: "tool_call_ledger_transition",
  at,
  sessionId: "s1",
  toolCallId: "toolu_01B",
  toolName: "bash",
  event: "tool_use_undelivered",
  from: null,
  to: "undelivered",
  handlerWaiting: false,
};

const delivery = {
  type: "tool_result_delivery",
  at,
  scan: { mode: "incremental", from: 120, length: 124, messagesExamined: 4 },
  extractedIds: ["toolu_01B"],
  presentButNotExtractedIds: ["toolu_01A"],
  missingFromContextIds: [],
  duplicateIds: [],
  lateIds: [],
  foreignIds: [],
  unknownIds: ["toolu_stray"],
  resolvedIds: ["toolu_01A"],
  queuedIds: ["toolu_01B"],
  malformedCount: 0,
};

describe("ToolCallId", () => {
  test("accepts Claude's tool-use ids and refuses an empty one", () => {
    expect(ToolCallId.parse("toolu_01ABCdef")).toBe("toolu_01ABCdef");
    expect(firstMessage(ToolCallId, "")).toBe("tool call id must not be empty");
    expect(ToolCallId.safeParse(42).success).toBe(false);
  });
});

describe("LedgerState", () => {
  test("holds the seven states of a call", () => {
    expect(LedgerState.options).toEqual([
      "emitted",
      "forwarded",
      "handler_waiting",
      "result_queued",
      "undelivered",
      "resolved",
      "failed",
    ]);
    expect(LedgerState.safeParse("parked").success).toBe(false);
  });
});

describe("DeliveryMismatchRecord", () => {
  test("accepts the seed's delivered 1/2, resolved 1/2, waiting 1", () => {
    expect(DeliveryMismatchRecord.parse(mismatch)).toEqual(mismatch);
  });

  test.each([
    [{ expectedCount: -1 }, "expectedCount"],
    [{ waitingCount: 2 }, "waitingCount"],
    [{ deliveredIds: ["toolu_01A", ""] }, "deliveredIds.1"],
    [{ at: "yesterday" }, "at"],
    [{ trigger: "" }, "trigger"],
    [{ sessionId: "" }, "sessionId"],
    [{ queuedIds: undefined }, "queuedIds"],
  ])("refuses %j naming %s", (change, field) => {
    // A bad list can also disagree with its count: both are named, the field first.
    expect(failedPaths(DeliveryMismatchRecord, { ...mismatch, ...change })[0]).toBe(field);
  });

  test("a count that disagrees with its list says so", () => {
    expect(firstMessage(DeliveryMismatchRecord, { ...mismatch, resolvedCount: 0 })).toBe(
      "resolvedCount must equal the number of listed ids (1)",
    );
  });

  test("refuses extra keys", () => {
    expect(DeliveryMismatchRecord.safeParse({ ...mismatch, note: "x" }).success).toBe(false);
  });
});

describe("LedgerTransitionRecord", () => {
  test("accepts a new entry, a failure with its reason, and the state before it", () => {
    expect(LedgerTransitionRecord.parse(transition)).toEqual(transition);
    const expired = {
      ...transition,
      event: "deadline_expired",
      from: "undelivered",
      to: "failed",
      handlerWaiting: false,
      reason: "deadline_expired",
      detail: "undelivered deadline expired after 60s",
    };
    expect(LedgerTransitionRecord.parse(expired)).toEqual(expired);
  });

  test.each([
    [{ toolCallId: "" }, "toolCallId"],
    [{ event: "parked" }, "event"],
    [{ from: "waiting" }, "from"],
    [{ to: undefined }, "to"],
    [{ handlerWaiting: "yes" }, "handlerWaiting"],
    [{ reason: "timeout" }, "reason"],
    [{ toolName: "" }, "toolName"],
  ])("refuses %j naming %s", (change, field) => {
    expect(failedPaths(LedgerTransitionRecord, { ...transition, ...change })).toEqual([field]);
  });
});

describe("ToolResultDeliveryRecord", () => {
  test("accepts a classification with its scan statistics", () => {
    expect(ToolResultDeliveryRecord.parse(delivery)).toEqual(delivery);
  });

  test.each([
    [{ scan: { ...delivery.scan, mode: "partial" } }, "scan.mode"],
    [{ scan: { ...delivery.scan, messagesExamined: 1.5 } }, "scan.messagesExamined"],
    [{ unknownIds: [""] }, "unknownIds.0"],
    [{ malformedCount: -1 }, "malformedCount"],
  ])("refuses %j naming %s", (change, field) => {
    expect(failedPaths(ToolResultDeliveryRecord, { ...delivery, ...change })).toEqual([field]);
  });
});

describe("DeliveryDiagnosticRecord", () => {
  test("accepts every record the ledger writes, told apart by type", () => {
    const rescan = {
      type: "tool_result_context_rescan",
      at,
      reason: "context_shorter",
      previousWatermark: 2000,
      length: 9,
    };
    const stall = {
      type: "stream_idle_timeout",
      at,
      queryId: "q-3",
      timeoutMs: 90_000,
      idleMs: 90_004,
      message: "Claude Code stream idle timeout after 90s with no tool call pending; treating ...",
    };
    for (const record of [mismatch, transition, delivery, rescan, stall]) {
      expect(DeliveryDiagnosticRecord.parse(record)).toEqual(record);
    }
  });

  test("refuses an unknown type and a stall without a positive timeout, naming the field", () => {
    expect(failedPaths(DeliveryDiagnosticRecord, { ...transition, type: "integrity_violation" })).toEqual([
      "type",
    ]);
    expect(
      failedPaths(DeliveryDiagnosticRecord, {
        type: "stream_idle_timeout",
        at,
        timeoutMs: 0,
        idleMs: 1,
        message: "x",
      }),
    ).toEqual(["timeoutMs"]);
  });
});

describe("ClaudeBridgeDiagnosticRecord", () => {
  const own = [
    { type: "undelivered_tool_calls_flushed", at, sessionId: "s1", ids: ["toolu_01A"] },
    {
      type: "claude_query_started",
      at,
      sessionId: "s1",
      resumed: false,
      rewound: false,
      replayedMessages: 3,
    },
    { type: "claude_query_ended", at, sessionId: "s1", detail: "Claude Code exited with code 1" },
    { type: "claude_api_retry", at, sessionId: "s1", status: null },
    { type: "claude_rate_limit", at, sessionId: "s1", status: "allowed_warning" },
    {
      type: "claude_rate_limit",
      at,
      sessionId: "s1",
      status: "rejected",
      rateLimitType: "five_hour",
      overageStatus: "allowed",
      usingOverage: true,
    },
    { type: "content_without_pi_stream", at, sessionId: "s1", block: "text" },
    { type: "claude_spend_refused", at, sessionId: "s1", rateLimitType: "five_hour", resetsAt: at },
    { type: "claude_keep_warm", at, sessionId: "s1", outcome: "sent", ms: 42 },
    {
      type: "claude_turn_receipt",
      at,
      sessionId: "s1",
      receipt: {
        requests: 2,
        inputTokens: 10,
        outputTokens: 20,
        cacheReadTokens: 9000,
        cacheWriteTokens: 300,
        rebuilds: ["model_switch"],
        lateToolResults: ["toolu_01A"],
        droppedToolResults: [{ id: "toolu_01B", reason: "deadline_expired" }],
        keepWarmRequests: 2,
      },
    },
  ];

  test("takes the provider's own records and every ledger record", () => {
    for (const record of own) expect(ClaudeBridgeDiagnosticRecord.parse(record)).toEqual(record);
    expect(ClaudeBridgeDiagnosticRecord.parse(mismatch)).toEqual(mismatch);
    expect(ClaudeBridgeDiagnosticRecord.parse(transition)).toEqual(transition);
  });

  test("refuses a record without its time, an unknown field and a bad count, naming the field", () => {
    const { at: _at, ...untimed } = own[1]!;
    expect(failedPaths(ClaudeBridgeDiagnosticRecord, untimed)).toEqual(["at"]);
    expect(failedPaths(ClaudeBridgeDiagnosticRecord, { ...own[1], prompt: "secret words" })).toEqual([""]);
    expect(failedPaths(ClaudeBridgeDiagnosticRecord, { ...own[1], replayedMessages: -1 })).toEqual([
      "replayedMessages",
    ]);
    expect(failedPaths(ClaudeBridgeDiagnosticRecord, { ...own[0], ids: [] })).toEqual(["ids"]);
  });

  test("refuses a receipt with a rebuild reason it does not know or a negative token count", () => {
    const receiptRecord = own.find((record) => record.type === "claude_turn_receipt") as {
      receipt: Record<string, unknown>;
    };
    const receipt = receiptRecord.receipt;
    expect(
      failedPaths(ClaudeBridgeDiagnosticRecord, {
        ...receiptRecord,
        receipt: { ...receipt, rebuilds: ["tuesday"] },
      }),
    ).toEqual(["receipt.rebuilds.0"]);
    expect(
      failedPaths(ClaudeBridgeDiagnosticRecord, {
        ...receiptRecord,
        receipt: { ...receipt, cacheReadTokens: -1 },
      }),
    ).toEqual(["receipt.cacheReadTokens"]);
  });
});
