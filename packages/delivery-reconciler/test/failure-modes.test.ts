/**
 * Regression tests for the three failure modes of seeds/pi-claude-bridge-delivery-fixes.md. Each was
 * seen failing against a ledger with its fix removed (tail-only delivery, no pending suppression in the
 * watchdog, no flush of undelivered calls).
 */
import { describe, expect, test } from "vitest";
import { call, createHarness, deliveredText, settle, track } from "./support/harness.js";

describe("failure mode 1: a result present in the context but not at its tail", () => {
  test("every waiting handler resolves, and the early result is reported present-but-not-extracted", async () => {
    const { ledger, messages, streamToolUses } = createHarness();
    const context = messages.history(30);
    streamToolUses(context, "toolu_A", "toolu_B");
    const handlerA = track(ledger.awaitResult("toolu_A"));
    const handlerB = track(ledger.awaitResult("toolu_B"));

    // A steer and a synthetic assistant message land between the two results: a reader that walks back
    // from the tail to the last assistant message sees only B.
    context.push(
      messages.assistant({ id: "toolu_A" }, { id: "toolu_B" }),
      messages.result("toolu_A"),
      messages.user("steer: also check the logs"),
      messages.assistant(),
      messages.result("toolu_B"),
    );
    const { delivery } = ledger.beginStream(context);
    await settle();

    expect(deliveredText(handlerA.value)).toBe("output of toolu_A");
    expect(deliveredText(handlerB.value)).toBe("output of toolu_B");
    expect(delivery.presentButNotExtractedIds).toEqual(["toolu_A"]);
    expect(delivery.extractedIds).toEqual(["toolu_B"]);
    expect(delivery.missingFromContextIds).toEqual([]);
    ledger.endStream("done");
    expect(ledger.checkQuiescence()).toEqual({ quiescent: true });
  });
});

describe("failure mode 2: a tool that runs longer than the idle timeout", () => {
  test("the watchdog stays quiet while Pi executes the call, and still watches Claude afterwards", async () => {
    const { ledger, messages, clock, stalls, deliverResults } = createHarness({ idleTimeoutMs: 5_000 });
    const context = messages.history(6);
    ledger.beginStream(context);
    ledger.noteActivity();
    ledger.recordToolUse(call("toolu_sleep8"));
    const handler = track(ledger.awaitResult("toolu_sleep8"));
    ledger.endStream("done");

    // `sleep 8` with a 5 s idle timeout: nothing at all happens for 8 s.
    clock.advance(8_000);
    expect(stalls).toEqual([]);

    deliverResults(context, "toolu_sleep8");
    await settle();
    expect(deliveredText(handler.value)).toBe("output of toolu_sleep8");
    expect(ledger.checkQuiescence()).toEqual({ quiescent: true });

    // Claude has its result and nothing is pending: from here on, silence is a genuine stall.
    clock.advance(4_999);
    expect(stalls).toEqual([]);
    clock.advance(1);
    expect(stalls).toEqual([expect.objectContaining({ timeoutMs: 5_000, idleMs: 5_000 })]);
  });

  test("while the result waits for Claude Code to invoke its handler, silence is expected too", () => {
    const { ledger, messages, clock, stalls, deliverResults, streamToolUses } = createHarness({
      idleTimeoutMs: 5_000,
    });
    const context = messages.history(3);
    streamToolUses(context, "toolu_A");
    deliverResults(context, "toolu_A");
    clock.advance(20_000);
    expect(stalls).toEqual([]);
    expect(ledger.stateOf("toolu_A")).toBe("result_queued");
  });
});

describe("failure mode 3: a second tool_use after the Pi stream of the first one closed", () => {
  test("it is recorded undelivered, flushed first on the next stream, executed and resolved", async () => {
    const { ledger, messages, deliverResults } = createHarness();
    const context = messages.history(9);
    ledger.beginStream(context);
    expect(ledger.recordToolUse(call("toolu_A", "bash"))).toBe("stream");
    ledger.endStream("done");
    const handlerA = track(ledger.awaitResult("toolu_A"));

    // Claude emits B as a second assistant message while no Pi stream is open, then waits for it.
    expect(ledger.recordToolUse(call("toolu_B", "bash"))).toBe("undelivered");
    const handlerB = track(ledger.awaitResult("toolu_B"));
    expect(ledger.stateOf("toolu_B")).toBe("undelivered");

    const second = deliverResults(context, "toolu_A");
    expect(second.flush.map((flushed) => flushed.id)).toEqual(["toolu_B"]);
    expect(second.flush[0]).toEqual(call("toolu_B", "bash"));
    expect(ledger.endStream("done").forwardedIds).toEqual(["toolu_B"]);

    deliverResults(context, "toolu_B");
    ledger.endStream("done");
    await settle();

    expect(deliveredText(handlerA.value)).toBe("output of toolu_A");
    expect(deliveredText(handlerB.value)).toBe("output of toolu_B");
    expect(ledger.checkQuiescence()).toEqual({ quiescent: true });
  });
});
