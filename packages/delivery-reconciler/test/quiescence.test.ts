import { DeliveryMismatchRecord } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { call, createHarness, settle } from "./support/harness.js";

describe("the quiescence check", () => {
  test("the seed's incident: delivered 1/2, resolved 1/2, waiting 1 gives a mismatch record", async () => {
    const { ledger, messages, records, streamToolUses } = createHarness({ sessionId: "pi-session-1" });
    const context = messages.history(3);
    streamToolUses(context, "toolu_A", "toolu_B");
    const handlerA = ledger.awaitResult("toolu_A");
    void ledger.awaitResult("toolu_B");
    context.push(messages.assistant({ id: "toolu_A" }, { id: "toolu_B" }), messages.result("toolu_A"));
    ledger.beginStream(context);
    await handlerA;

    const result = ledger.checkQuiescence("teardown");
    expect(result.quiescent).toBe(false);
    if (result.quiescent) return;
    expect(result.mismatch).toEqual({
      type: "tool_result_delivery_mismatch",
      at: expect.any(String),
      sessionId: "pi-session-1",
      trigger: "teardown",
      expectedCount: 2,
      deliveredCount: 1,
      resolvedCount: 1,
      waitingCount: 1,
      expectedIds: ["toolu_A", "toolu_B"],
      deliveredIds: ["toolu_A"],
      resolvedIds: ["toolu_A"],
      waitingIds: ["toolu_B"],
      queuedIds: [],
      undeliveredIds: [],
      emittedIds: [],
      executingIds: ["toolu_B"],
      failedIds: [],
    });
    expect(DeliveryMismatchRecord.parse(result.mismatch)).toEqual(result.mismatch);
    expect(records.at(-1)).toEqual(result.mismatch);
  });

  test("lists undelivered, queued, emitted and failed calls by id", async () => {
    const { ledger, messages, clock, streamToolUses } = createHarness({
      deadlines: { undeliveredMs: 1_000 },
    });
    const context = messages.history(3);
    streamToolUses(context, "toolu_queued");
    context.push(messages.assistant({ id: "toolu_queued" }), messages.result("toolu_queued"));
    ledger.recordToolUse(call("toolu_failed"));
    clock.advance(1_000);
    ledger.beginStream(context);
    ledger.recordToolUse(call("toolu_emitted"));
    ledger.endStream("error");
    ledger.recordToolUse(call("toolu_undelivered"));
    await settle();
    const result = ledger.checkQuiescence("turn_end");
    expect(result.quiescent).toBe(false);
    if (result.quiescent) return;
    expect(result.mismatch).toMatchObject({
      trigger: "turn_end",
      expectedIds: ["toolu_queued", "toolu_failed", "toolu_emitted", "toolu_undelivered"],
      deliveredIds: ["toolu_queued"],
      queuedIds: ["toolu_queued"],
      undeliveredIds: ["toolu_emitted", "toolu_undelivered"],
      failedIds: ["toolu_failed"],
      waitingCount: 0,
    });
  });

  test("a clean round passes and writes nothing", async () => {
    const { ledger, messages, records, deliverResults, streamToolUses } = createHarness();
    const context = messages.history(3);
    streamToolUses(context, "toolu_A");
    const handler = ledger.awaitResult("toolu_A");
    deliverResults(context, "toolu_A");
    await handler;
    ledger.endStream("done");
    const before = records.length;
    expect(ledger.checkQuiescence()).toEqual({ quiescent: true });
    expect(records.length).toBe(before);
  });

  test("each check closes a round: the next one counts only new calls, and old ids stay known", async () => {
    const { ledger, messages, deliverResults, streamToolUses } = createHarness();
    const context = messages.history(3);
    streamToolUses(context, "toolu_old");
    const old = ledger.awaitResult("toolu_old");
    deliverResults(context, "toolu_old");
    await old;
    expect(ledger.checkQuiescence()).toEqual({ quiescent: true });
    expect(ledger.snapshot().entries).toEqual([]);
    expect(ledger.stateOf("toolu_old")).toBe("resolved");

    ledger.recordToolUse(call("toolu_new"));
    ledger.recordToolUse(call("toolu_old"));
    context.push(messages.result("toolu_old", "replayed"));
    const { delivery } = ledger.beginStream(context);
    expect(delivery.duplicateIds).toEqual(["toolu_old"]);
    const result = ledger.checkQuiescence();
    expect(result.quiescent).toBe(false);
    if (result.quiescent) return;
    expect(result.mismatch.expectedIds).toEqual(["toolu_new"]);
    expect(result.mismatch.emittedIds).toEqual(["toolu_new"]);
  });
});
