import { describe, expect, test } from "vitest";
import { streamIdleTimeoutMessage } from "../src/index.js";
import { call, createHarness } from "./support/harness.js";

/**
 * Pi 0.73.1 `_isRetryableError` (@mariozechner/pi-coding-agent dist/core/agent-session.js:1931):
 * an assistant error whose errorMessage matches this is retried with backoff.
 */
const piRetryable =
  /overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|http2 request did not get a response|timed? out|timeout|terminated|retry delay/i;

/** Pi 0.73.1 context-overflow patterns (@mariozechner/pi-ai dist/utils/overflow.js): never retried. */
const piOverflow = [
  /prompt is too long/i,
  /request_too_large/i,
  /input is too long for requested model/i,
  /exceeds the context window/i,
  /input token count.*exceeds the maximum/i,
  /maximum prompt length is \d+/i,
  /reduce the length of the messages/i,
  /maximum context length is \d+ tokens/i,
  /exceeds the limit of \d+/i,
  /exceeds the available context size/i,
  /greater than the context length/i,
  /context window exceeds limit/i,
  /exceeded model token limit/i,
  /too large for model with \d+ maximum context length/i,
  /model_context_window_exceeded/i,
  /prompt too long; exceeded (?:max )?context length/i,
  /context[_ ]length[_ ]exceeded/i,
  /too many tokens/i,
  /token limit exceeded/i,
  /^4(?:00|13)\s*(?:status code)?\s*\(no body\)/i,
];

describe("the stall message", () => {
  test.each([90_000, 5_000, 250, 120_000])(
    "for %i ms is retried by Pi and is not an overflow",
    (timeoutMs) => {
      const message = streamIdleTimeoutMessage(timeoutMs);
      expect(message).toMatch(piRetryable);
      for (const overflow of piOverflow) expect(message).not.toMatch(overflow);
    },
  );

  test("names the timeout", () => {
    expect(streamIdleTimeoutMessage(90_000)).toContain("after 90s");
    expect(streamIdleTimeoutMessage(250)).toContain("after 250ms");
    expect(streamIdleTimeoutMessage(120_000)).toContain("after 2m");
  });
});

describe("the idle watchdog", () => {
  test("fires once on a genuine stall, with a record in the sink", () => {
    const { ledger, messages, clock, stalls, records } = createHarness({ idleTimeoutMs: 5_000 });
    ledger.beginStream(messages.history(4));
    clock.advance(4_999);
    expect(stalls).toEqual([]);
    clock.advance(1);
    expect(stalls).toEqual([{ message: streamIdleTimeoutMessage(5_000), timeoutMs: 5_000, idleMs: 5_000 }]);
    expect(records.filter((record) => record.type === "stream_idle_timeout")).toEqual([
      expect.objectContaining({ timeoutMs: 5_000, idleMs: 5_000, message: streamIdleTimeoutMessage(5_000) }),
    ]);
    clock.advance(60_000);
    expect(stalls).toHaveLength(1);
  });

  test("activity restarts the count, and after a stall new activity re-arms it", () => {
    const { ledger, messages, clock, stalls } = createHarness({ idleTimeoutMs: 5_000 });
    ledger.beginStream(messages.history(4));
    for (let step = 0; step < 10; step++) {
      clock.advance(4_000);
      ledger.noteActivity();
    }
    expect(stalls).toEqual([]);
    clock.advance(5_000);
    expect(stalls).toHaveLength(1);
    ledger.noteActivity();
    clock.advance(5_000);
    expect(stalls).toHaveLength(2);
  });

  test("is quiet through a silence the app announced (Claude Code starting), and counts from its end", async () => {
    const { ledger, messages, clock, stalls } = createHarness({ idleTimeoutMs: 5_000 });
    let started!: () => void;
    ledger.expectSilenceUntil(new Promise<void>((resolve) => (started = resolve)));
    ledger.beginStream(messages.history(4));
    clock.advance(60_000);
    expect(stalls).toEqual([]);
    started();
    await Promise.resolve();
    clock.advance(4_999);
    expect(stalls).toEqual([]);
    clock.advance(1);
    expect(stalls).toHaveLength(1);
  });

  test("0 turns it off", () => {
    const { ledger, messages, clock, stalls } = createHarness({ idleTimeoutMs: 0 });
    ledger.beginStream(messages.history(4));
    clock.advance(10 * 60_000);
    expect(stalls).toEqual([]);
  });

  test("watches only during a turn: not before the first stream, not after a turn that ended", () => {
    const { ledger, messages, clock, stalls } = createHarness({ idleTimeoutMs: 5_000 });
    clock.advance(60_000);
    ledger.beginStream(messages.history(4));
    ledger.noteActivity();
    ledger.endStream("done");
    clock.advance(60_000);
    ledger.beginStream(messages.history(4));
    ledger.endStream("error");
    clock.advance(60_000);
    expect(stalls).toEqual([]);
  });

  test.each([
    ["a call on the open stream whose message has not ended", "emitted"],
    ["an undelivered call", "undelivered"],
    ["a call Pi is executing", "forwarded"],
    ["a handler waiting for a call", "handler_waiting"],
    ["a result queued for its handler", "result_queued"],
  ] as const)("is suppressed by %s", (_, state) => {
    const { ledger, messages, clock, stalls, deliverResults } = createHarness({ idleTimeoutMs: 5_000 });
    const context = messages.history(4);
    ledger.beginStream(context);
    if (state === "emitted") ledger.recordToolUse(call("toolu_1"));
    if (state === "handler_waiting") void ledger.awaitResult("toolu_1");
    if (state === "forwarded" || state === "result_queued" || state === "undelivered") {
      ledger.recordToolUse(call("toolu_0"));
      ledger.endStream("done");
      if (state === "undelivered") ledger.recordToolUse(call("toolu_1"));
      if (state === "result_queued") deliverResults(context, "toolu_0");
    }
    expect(ledger.snapshot().entries.map((entry) => entry.state)).toContain(state);
    clock.advance(4_000);
    expect(stalls).toEqual([]);
    clock.advance(50_000);
    expect(stalls).toEqual([]);
  });

  test("once the last pending call settles, Claude gets the full allowance from that moment", async () => {
    const { ledger, messages, clock, stalls, deliverResults } = createHarness({ idleTimeoutMs: 5_000 });
    const context = messages.history(4);
    ledger.beginStream(context);
    ledger.recordToolUse(call("toolu_A"));
    const handler = ledger.awaitResult("toolu_A");
    ledger.endStream("done");
    clock.advance(30_000);
    deliverResults(context, "toolu_A");
    await handler;
    clock.advance(4_999);
    expect(stalls).toEqual([]);
    clock.advance(1);
    expect(stalls).toHaveLength(1);
  });
});
