import { describe, expect, test } from "vitest";
import { createHarness, deliveredText, settle, track } from "./support/harness.js";
import type { PiMessage } from "./support/pi-messages.js";

function indexOfCall(context: readonly PiMessage[], id: string): number {
  return context.findIndex(
    (message) =>
      message.role === "assistant" && message.content.some((block) => "id" in block && block.id === id),
  );
}

describe("scan cost", () => {
  test("a first context is history: only its tail is read", () => {
    const { ledger, messages } = createHarness();
    const { delivery } = ledger.beginStream(messages.history(10_000));
    expect(delivery.scan).toMatchObject({ mode: "skipped", length: 10_000 });
    expect(delivery.scan.messagesExamined).toBeLessThanOrEqual(3);
    expect(delivery.foreignIds.length + delivery.unknownIds.length).toBeLessThanOrEqual(1);
    expect(delivery.unknownIds).toEqual([]);
  });

  test.each([100, 1_000, 10_000, 100_000])(
    "with %i messages of history, delivering one result reads only the messages appended since",
    (historyLength) => {
      const { ledger, messages, streamToolUses } = createHarness();
      const context = messages.history(historyLength);
      streamToolUses(context, "toolu_A");
      context.push(messages.assistant({ id: "toolu_A" }), messages.user("steer"), messages.result("toolu_A"));
      const { delivery } = ledger.beginStream(context);
      expect(delivery.scan).toEqual({
        mode: "incremental",
        from: historyLength,
        length: historyLength + 3,
        messagesExamined: 3,
      });
      expect(delivery.extractedIds).toEqual(["toolu_A"]);
    },
  );

  test("while a call stays unresolved, each scan reads at most the messages since that call", async () => {
    const { ledger, messages, streamToolUses } = createHarness();
    const context = messages.history(5_000);
    streamToolUses(context, "toolu_slow", "toolu_fast");
    const slow = track(ledger.awaitResult("toolu_slow"));
    context.push(
      messages.assistant({ id: "toolu_slow" }, { id: "toolu_fast" }),
      messages.result("toolu_fast"),
    );
    const earliestUnresolved = indexOfCall(context, "toolu_slow");
    let examinedInTotal = 0;
    for (let round = 0; round < 50; round++) {
      const { delivery } = ledger.beginStream(context);
      examinedInTotal += delivery.scan.messagesExamined;
      expect(delivery.scan.messagesExamined).toBeLessThanOrEqual(context.length - earliestUnresolved);
      ledger.endStream("done");
      context.push(messages.user(`chatter ${round}`), messages.assistant());
    }
    context.push(messages.result("toolu_slow"));
    const { delivery } = ledger.beginStream(context);
    examinedInTotal += delivery.scan.messagesExamined;
    expect(delivery.presentButNotExtractedIds).toEqual([]);
    expect(delivery.extractedIds).toEqual(["toolu_slow"]);
    // Over every scan, each message since the earliest unresolved call was read exactly once.
    expect(examinedInTotal).toBe(context.length - earliestUnresolved);
    await settle();
    expect(deliveredText(slow.value)).toBe("output of toolu_slow");
  });

  test("Pi rebuilds the array for every call: copies of the same messages still scan incrementally", () => {
    const { ledger, messages, streamToolUses } = createHarness();
    const context = messages.history(1_000);
    streamToolUses(context, "toolu_A");
    context.push(messages.assistant({ id: "toolu_A" }), messages.result("toolu_A"));
    const rebuilt = context.map((message) => structuredClone(message));
    expect(ledger.beginStream(rebuilt).delivery.scan).toMatchObject({
      mode: "incremental",
      messagesExamined: 2,
    });
  });
});

describe("a context that shrank or was rewritten", () => {
  test("after compaction the whole context is scanned, says so, and still delivers", async () => {
    const { ledger, messages, records, streamToolUses } = createHarness();
    const context = messages.history(2_000);
    streamToolUses(context, "toolu_A");
    const handler = track(ledger.awaitResult("toolu_A"));
    const compacted: PiMessage[] = [
      messages.user("summary of the conversation so far"),
      ...context.slice(-6),
      messages.assistant({ id: "toolu_A" }),
      messages.result("toolu_A"),
    ];
    const { delivery } = ledger.beginStream(compacted);
    expect(delivery.scan).toEqual({ mode: "full", from: 0, length: 9, messagesExamined: 9 });
    expect(records).toContainEqual(
      expect.objectContaining({
        type: "tool_result_context_rescan",
        reason: "context_shorter",
        previousWatermark: 2_000,
        length: 9,
      }),
    );
    expect(delivery.unknownIds).toEqual([]);
    await settle();
    expect(deliveredText(handler.value)).toBe("output of toolu_A");
  });

  test("a context as long as before but different below the watermark is rescanned", () => {
    const { ledger, messages, records } = createHarness();
    const context = messages.history(50);
    ledger.beginStream(context);
    const rewritten = [...messages.history(50, "other"), messages.user()];
    expect(ledger.beginStream(rewritten).delivery.scan.mode).toBe("full");
    expect(records).toContainEqual(
      expect.objectContaining({ type: "tool_result_context_rescan", reason: "context_rewritten" }),
    );
  });

  test("a rescan reports results already resolved as duplicates and never delivers them twice", async () => {
    const { ledger, messages, deliverResults, streamToolUses } = createHarness();
    const context = messages.history(10);
    streamToolUses(context, "toolu_A");
    const handler = ledger.awaitResult("toolu_A");
    deliverResults(context, "toolu_A");
    await handler;
    const { delivery } = ledger.beginStream(context.slice(5));
    expect(delivery.scan.mode).toBe("full");
    expect(delivery.duplicateIds).toEqual(["toolu_A"]);
    expect(delivery.resolvedIds).toEqual([]);
  });
});
