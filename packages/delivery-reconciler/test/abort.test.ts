import { describe, expect, test } from "vitest";
import { HandlerCancelledError, LedgerDisposedError, ToolCallLedger } from "../src/index.js";
import { FakeClock } from "./support/fake-clock.js";
import { call, createHarness, deliveredText, settle, track } from "./support/harness.js";
import { MessageFactory } from "./support/pi-messages.js";

describe("abort", () => {
  test("every waiting handler resolves at once with an aborted error, in any state", async () => {
    const { ledger, messages, streamToolUses } = createHarness();
    const context = messages.history(3);
    streamToolUses(context, "toolu_forwarded");
    ledger.recordToolUse(call("toolu_undelivered"));
    const handlers = [
      track(ledger.awaitResult("toolu_forwarded")),
      track(ledger.awaitResult("toolu_undelivered")),
      track(ledger.awaitResult("toolu_nameless")),
    ];
    ledger.abort("user pressed Escape");
    await settle();
    for (const handler of handlers) {
      expect(handler.value).toMatchObject({
        kind: "error",
        reason: "aborted",
        text: "Operation aborted: user pressed Escape",
        retryable: false,
      });
    }
    expect(ledger.snapshot()).toMatchObject({ streamOpen: false, turnActive: false, liveCount: 0 });
    expect(ledger.checkQuiescence()).toEqual({ quiescent: true });
  });

  test("results arriving after an abort are late, and the ledger takes new calls", async () => {
    const { ledger, messages, deliverResults, streamToolUses } = createHarness();
    const context = messages.history(3);
    streamToolUses(context, "toolu_A");
    ledger.abort();
    expect(await ledger.awaitResult("toolu_A")).toMatchObject({ kind: "error", text: "Operation aborted" });
    const { delivery } = deliverResults(context, "toolu_A");
    expect(delivery.lateIds).toEqual(["toolu_A"]);
    expect(ledger.recordToolUse(call("toolu_B"))).toBe("stream");
    ledger.endStream("done");
    const handler = ledger.awaitResult("toolu_B");
    deliverResults(context, "toolu_B");
    expect(deliveredText(await handler)).toBe("output of toolu_B");
  });

  test("a cancelled MCP request rejects its handler and fails the call; its result is late", async () => {
    const { ledger, messages, transitions, deliverResults, streamToolUses } = createHarness();
    const context = messages.history(3);
    streamToolUses(context, "toolu_A");
    const controller = new AbortController();
    const handler = ledger.awaitResult("toolu_A", controller.signal);
    controller.abort("remote-cancel");
    await expect(handler).rejects.toBeInstanceOf(HandlerCancelledError);
    await expect(handler).rejects.toMatchObject({ toolCallId: "toolu_A", cause: "remote-cancel" });
    expect(transitions("toolu_A").at(-1)).toMatchObject({ event: "handler_cancelled", to: "failed" });
    expect(deliverResults(context, "toolu_A").delivery.lateIds).toEqual(["toolu_A"]);
  });

  test("a handler whose signal is already aborted is rejected at once", async () => {
    const { ledger } = createHarness();
    ledger.recordToolUse(call("toolu_A"));
    await expect(ledger.awaitResult("toolu_A", AbortSignal.abort())).rejects.toBeInstanceOf(
      HandlerCancelledError,
    );
    expect(ledger.stateOf("toolu_A")).toBe("failed");
  });
});

describe("dispose", () => {
  test("answers waiting handlers, cancels every timer, and refuses further changes", async () => {
    const { ledger, messages, clock } = createHarness({ idleTimeoutMs: 5_000 });
    ledger.beginStream(messages.history(3));
    ledger.recordToolUse(call("toolu_A"));
    const handler = track(ledger.awaitResult("toolu_A"));
    expect(clock.pendingTimers).toBeGreaterThan(0);
    ledger.dispose();
    await settle();
    expect(handler.value).toMatchObject({ kind: "error", reason: "aborted" });
    expect(clock.pendingTimers).toBe(0);
    expect(() => ledger.beginStream([])).toThrow(LedgerDisposedError);
    expect(() => ledger.recordToolUse(call("toolu_B"))).toThrow("recordToolUse called after dispose()");
    expect(await ledger.awaitResult("toolu_C")).toMatchObject({ kind: "error", reason: "aborted" });
  });
});

describe("a failing sink", () => {
  test("never breaks delivery; its errors go to onSinkError", async () => {
    const sinkErrors: unknown[] = [];
    const messages = new MessageFactory();
    const ledger = new ToolCallLedger({
      clock: new FakeClock(),
      sink: () => {
        throw new Error("disk full");
      },
      onSinkError: (error) => sinkErrors.push(error),
    });
    const context = messages.history(3);
    ledger.beginStream(context);
    ledger.recordToolUse(call("toolu_A"));
    ledger.endStream("done");
    const handler = ledger.awaitResult("toolu_A");
    context.push(messages.assistant({ id: "toolu_A" }), messages.result("toolu_A"));
    ledger.beginStream(context);
    expect((await handler).kind).toBe("result");
    expect(sinkErrors.length).toBeGreaterThan(0);
    ledger.dispose();
  });
});
