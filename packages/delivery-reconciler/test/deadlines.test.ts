import { describe, expect, test } from "vitest";
import { defaultDeadlines } from "../src/index.js";
import { call, createHarness, deliveredText, settle, track } from "./support/harness.js";

const deadlines = {
  emittedMs: 10_000,
  undeliveredMs: 20_000,
  executingMs: 300_000,
  missingResultMs: 7_000,
  queuedMs: 30_000,
  strandedHandlerMs: 2_000,
};

describe("deadlines", () => {
  test("every waiting state has a default deadline", () => {
    for (const value of Object.values(defaultDeadlines)) expect(value).toBeGreaterThan(0);
    expect(Object.keys(defaultDeadlines).sort()).toEqual(Object.keys(deadlines).sort());
  });

  test("a call whose message never ends fails as not run, safe to retry", async () => {
    const { ledger, messages, clock, transitions } = createHarness({ deadlines });
    ledger.beginStream(messages.history(3));
    ledger.recordToolUse(call("toolu_A"));
    const handler = track(ledger.awaitResult("toolu_A"));
    expect(ledger.snapshot().entries[0]?.deadlineAt).toBe(clock.now() + 10_000);
    clock.advance(9_999);
    await settle();
    expect(handler.state).toBe("pending");
    clock.advance(1);
    await settle();
    expect(handler.value).toEqual({
      kind: "error",
      toolCallId: "toolu_A",
      reason: "deadline_expired",
      retryable: true,
      text: expect.stringContaining("never reached Pi"),
    });
    expect(transitions("toolu_A").at(-1)).toMatchObject({
      event: "deadline_expired",
      from: "handler_waiting",
      to: "failed",
      reason: "deadline_expired",
      detail: "emitted deadline expired after 10s",
    });
    expect(ledger.endStream("done").forwardedIds).toEqual([]);
  });

  test("an undelivered call that no stream picks up fails as not run, and is never flushed afterwards", async () => {
    const { ledger, messages, clock } = createHarness({ deadlines });
    ledger.recordToolUse(call("toolu_B"));
    const handler = track(ledger.awaitResult("toolu_B"));
    clock.advance(20_000);
    await settle();
    expect(handler.value).toMatchObject({ kind: "error", retryable: true, reason: "deadline_expired" });
    expect(ledger.beginStream(messages.history(3)).flush).toEqual([]);
  });

  test("a call Pi executes past its backstop fails with an unknown outcome, and its result is late", async () => {
    const { ledger, messages, clock, deliverResults, streamToolUses } = createHarness({ deadlines });
    const context = messages.history(3);
    streamToolUses(context, "toolu_C");
    const handler = track(ledger.awaitResult("toolu_C"));
    clock.advance(299_999);
    await settle();
    expect(handler.state).toBe("pending");
    clock.advance(1);
    await settle();
    expect(handler.value).toMatchObject({
      kind: "error",
      retryable: false,
      text: expect.stringContaining("outcome is unknown"),
    });
    expect(deliverResults(context, "toolu_C").delivery.lateIds).toEqual(["toolu_C"]);
  });

  test("a result missing from Pi's next context shortens the wait to the missing-result grace", async () => {
    const { ledger, messages, clock, transitions, streamToolUses } = createHarness({ deadlines });
    const context = messages.history(3);
    streamToolUses(context, "toolu_D");
    const handler = track(ledger.awaitResult("toolu_D"));
    context.push(messages.assistant({ id: "toolu_D" }), messages.user("where did it go?"));
    const { delivery } = ledger.beginStream(context);
    expect(delivery.missingFromContextIds).toEqual(["toolu_D"]);
    expect(transitions("toolu_D").map((record) => record.event)).toContain("missing_from_context");
    clock.advance(7_000);
    await settle();
    expect(handler.value).toMatchObject({ kind: "error", retryable: false, reason: "deadline_expired" });
  });

  test("a result nobody claims fails as unclaimed, yet a late handler still gets the real result", async () => {
    const { ledger, messages, clock, deliverResults, streamToolUses } = createHarness({ deadlines });
    const context = messages.history(3);
    streamToolUses(context, "toolu_E");
    deliverResults(context, "toolu_E");
    expect(ledger.stateOf("toolu_E")).toBe("result_queued");
    clock.advance(30_000);
    expect(ledger.snapshot().entries[0]).toMatchObject({ state: "failed", reason: "result_unclaimed" });
    expect(deliveredText(await ledger.awaitResult("toolu_E"))).toBe("output of toolu_E");
  });

  test("a handler for an id no tool_use named is answered after a bounded grace once the turn ended", async () => {
    const { ledger, messages, clock } = createHarness({ deadlines });
    ledger.beginStream(messages.history(3));
    const handler = track(ledger.awaitResult("toolu_ghost"));
    // While Claude's message still streams, the tool_use may yet arrive: the grace has not started.
    clock.advance(5_000);
    await settle();
    expect(handler.state).toBe("pending");
    ledger.endStream("done");
    clock.advance(1_999);
    await settle();
    expect(handler.state).toBe("pending");
    clock.advance(1);
    await settle();
    expect(handler.value).toMatchObject({
      kind: "error",
      retryable: true,
      text: expect.stringContaining("no tool_use block with this id reached Pi"),
    });
  });

  test("a handler that arrives before its tool_use is not stranded when the tool_use follows", async () => {
    const { ledger, messages, clock, deliverResults } = createHarness({ deadlines });
    const context = messages.history(3);
    ledger.beginStream(context);
    const handler = track(ledger.awaitResult("toolu_F"));
    ledger.recordToolUse(call("toolu_F"));
    ledger.endStream("done");
    clock.advance(60_000);
    deliverResults(context, "toolu_F");
    await settle();
    expect(deliveredText(handler.value)).toBe("output of toolu_F");
  });

  test("settled calls leave no timer behind", async () => {
    const { ledger, messages, clock, deliverResults, streamToolUses } = createHarness({
      deadlines,
      idleTimeoutMs: 0,
    });
    const context = messages.history(3);
    streamToolUses(context, "toolu_G");
    const handler = ledger.awaitResult("toolu_G");
    expect(clock.pendingTimers).toBe(1);
    deliverResults(context, "toolu_G");
    await handler;
    expect(clock.pendingTimers).toBe(0);
  });
});
