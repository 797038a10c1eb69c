import { describe, expect, test } from "vitest";
import { HandlerRefusedError } from "../src/index.js";
import { call, createHarness, deliveredText, settle, track } from "./support/harness.js";

describe("pairing by id", () => {
  test("three same-name calls with identical arguments each get their own result, whatever the order", async () => {
    const { ledger, messages } = createHarness();
    const context = messages.history(3);
    ledger.beginStream(context);
    const ids = ["toolu_1", "toolu_2", "toolu_3"];
    for (const id of ids) ledger.recordToolUse({ id, name: "web_fetch", arguments: {} });
    ledger.endStream("done");
    const handlers = ids.map((id) => track(ledger.awaitResult(id)));
    context.push(
      messages.assistant(...ids.map((id) => ({ id, name: "web_fetch" }))),
      messages.result("toolu_3"),
      messages.result("toolu_1"),
      messages.result("toolu_2"),
    );
    ledger.beginStream(context);
    await settle();
    expect(handlers.map((handler) => deliveredText(handler.value))).toEqual(
      ids.map((id) => `output of ${id}`),
    );
  });

  test("a result for another id never goes to a waiting handler, even with the same tool name", async () => {
    const { ledger, messages } = createHarness();
    const context = messages.history(3);
    ledger.beginStream(context);
    ledger.recordToolUse(call("toolu_X", "bash"));
    ledger.endStream("done");
    const handler = track(ledger.awaitResult("toolu_X"));
    context.push(messages.assistant({ id: "toolu_X" }), messages.result("toolu_Y"));
    const { delivery } = ledger.beginStream(context);
    await settle();
    expect(handler.state).toBe("pending");
    expect(delivery.unknownIds).toEqual(["toolu_Y"]);
    expect(delivery.missingFromContextIds).toEqual(["toolu_X"]);
  });
});

describe("results before their handler (Claude Code runs non-read-only MCP calls one at a time)", () => {
  test("B's result is queued by id and handed over the moment handler B is invoked", async () => {
    const { ledger, messages } = createHarness();
    const context = messages.history(3);
    ledger.beginStream(context);
    ledger.recordToolUse(call("toolu_A"));
    const handlerA = track(ledger.awaitResult("toolu_A"));
    ledger.recordToolUse(call("toolu_B"));
    ledger.endStream("done");
    context.push(
      messages.assistant({ id: "toolu_A" }, { id: "toolu_B" }),
      messages.result("toolu_A"),
      messages.result("toolu_B"),
    );
    const { delivery } = ledger.beginStream(context);
    expect(delivery.resolvedIds).toEqual(["toolu_A"]);
    expect(delivery.queuedIds).toEqual(["toolu_B"]);
    expect(ledger.stateOf("toolu_B")).toBe("result_queued");
    await settle();
    expect(deliveredText(handlerA.value)).toBe("output of toolu_A");
    expect(deliveredText(await ledger.awaitResult("toolu_B"))).toBe("output of toolu_B");
    expect(ledger.checkQuiescence()).toEqual({ quiescent: true });
  });
});

describe("classification of the results in a context", () => {
  test("duplicates: the same result twice in one context, and a resolved id seen again later", async () => {
    const { ledger, messages, streamToolUses } = createHarness();
    const context = messages.history(3);
    streamToolUses(context, "toolu_A");
    const handler = track(ledger.awaitResult("toolu_A"));
    context.push(
      messages.assistant({ id: "toolu_A" }),
      messages.result("toolu_A"),
      messages.result("toolu_A", "bis"),
    );
    expect(ledger.beginStream(context).delivery).toMatchObject({
      extractedIds: ["toolu_A"],
      duplicateIds: ["toolu_A"],
    });
    await settle();
    expect(deliveredText(handler.value)).toBe("output of toolu_A");
    context.push(messages.result("toolu_A", "again"));
    expect(ledger.beginStream(context).delivery.duplicateIds).toEqual(["toolu_A"]);
  });

  test("unknown ids are refused and reported, in the returned report and in the sink", () => {
    const { ledger, messages, records } = createHarness();
    const context = messages.history(3);
    ledger.beginStream(context);
    context.push(messages.user(), messages.result("toolu_nobody"));
    const { delivery } = ledger.beginStream(context);
    expect(delivery.unknownIds).toEqual(["toolu_nobody"]);
    expect(ledger.stateOf("toolu_nobody")).toBeUndefined();
    expect(records.at(-1)).toMatchObject({ type: "tool_result_delivery", unknownIds: ["toolu_nobody"] });
  });

  test("results whose call is in the context but not in the ledger are foreign, not unknown", () => {
    const { ledger, messages } = createHarness();
    const context = messages.history(3);
    ledger.beginStream(context);
    // A turn served by another provider: its assistant message names the call.
    context.push(
      messages.user(),
      messages.assistant({ id: "call_openai_1" }),
      messages.result("call_openai_1"),
    );
    const { delivery } = ledger.beginStream(context);
    expect(delivery.foreignIds).toEqual(["call_openai_1"]);
    expect(delivery.unknownIds).toEqual([]);
  });

  test("malformed results are counted and never delivered", () => {
    const { ledger, messages } = createHarness();
    const context = messages.history(3);
    ledger.beginStream(context);
    context.push({ ...messages.result("x"), toolCallId: "" });
    expect(ledger.beginStream(context).delivery.malformedCount).toBe(1);
  });

  test("a repeated tool_use is reported duplicate and never reaches Pi twice", () => {
    const { ledger, messages } = createHarness();
    ledger.beginStream(messages.history(3));
    expect(ledger.recordToolUse(call("toolu_A"))).toBe("stream");
    expect(ledger.recordToolUse(call("toolu_A"))).toBe("duplicate");
    expect(ledger.endStream("done").forwardedIds).toEqual(["toolu_A"]);
  });

  test("a tool_use without an id is refused by field name", () => {
    const { ledger } = createHarness();
    expect(() => ledger.recordToolUse(call(""))).toThrow("toolCall.id must be a non-empty string");
  });
});

describe("calls whose arguments Pi cannot be given", () => {
  test("a refused call never reaches Pi; its handler, before or after, gets the refusal; nothing stays live", async () => {
    const { ledger, messages, transitions } = createHarness();
    const context = messages.history(3);
    ledger.beginStream(context);
    const early = track(ledger.awaitResult("toolu_early"));
    expect(ledger.refuseToolUse({ id: "toolu_early", name: "bash" }, "not a JSON object")).toBe("refused");
    expect(ledger.refuseToolUse({ id: "toolu_late", name: "bash" }, "not valid JSON")).toBe("refused");
    expect(ledger.refuseToolUse({ id: "toolu_late", name: "bash" }, "again")).toBe("duplicate");
    expect(ledger.endStream("done")).toEqual({ forwardedIds: [], undeliveredIds: [] });
    await settle();
    expect(early.value).toMatchObject({
      kind: "error",
      reason: "invalid_arguments",
      text: "not a JSON object",
    });
    await expect(ledger.awaitResult("toolu_late")).resolves.toMatchObject({
      kind: "error",
      text: "not valid JSON",
    });
    expect(ledger.snapshot().liveCount).toBe(0);
    expect(ledger.checkQuiescence("turn_end")).toEqual({ quiescent: true });
    expect(transitions("toolu_late")[0]).toMatchObject({
      event: "tool_use_refused",
      from: null,
      to: "failed",
      reason: "invalid_arguments",
    });
  });
});

describe("handlers the ledger refuses", () => {
  test("an empty id, a second handler for the same id, a handler for an id already answered", async () => {
    const { ledger, messages, deliverResults } = createHarness();
    await expect(ledger.awaitResult("")).rejects.toMatchObject({ code: "invalid_id" });
    const context = messages.history(3);
    ledger.beginStream(context);
    ledger.recordToolUse(call("toolu_A"));
    const first = ledger.awaitResult("toolu_A");
    await expect(ledger.awaitResult("toolu_A")).rejects.toMatchObject({ code: "handler_already_waiting" });
    ledger.endStream("done");
    deliverResults(context, "toolu_A");
    expect(deliveredText(await first)).toBe("output of toolu_A");
    const again = ledger.awaitResult("toolu_A");
    await expect(again).rejects.toBeInstanceOf(HandlerRefusedError);
    await expect(again).rejects.toMatchObject({ code: "already_resolved" });
  });
});

describe("stream outcomes", () => {
  test("calls on a stream that ended with an error were never given to Pi: they are flushed next time", () => {
    const { ledger, messages } = createHarness();
    const context = messages.history(3);
    ledger.beginStream(context);
    ledger.recordToolUse(call("toolu_A"));
    expect(ledger.endStream("error")).toEqual({ forwardedIds: [], undeliveredIds: ["toolu_A"] });
    expect(ledger.beginStream(context).flush.map((flushed) => flushed.id)).toEqual(["toolu_A"]);
  });

  test("a stream opened while another is still open closes the old one as failed and flushes its calls", () => {
    const { ledger, messages } = createHarness();
    const context = messages.history(3);
    ledger.beginStream(context);
    ledger.recordToolUse(call("toolu_A"));
    expect(ledger.beginStream(context).flush.map((flushed) => flushed.id)).toEqual(["toolu_A"]);
    expect(ledger.endStream("done").forwardedIds).toEqual(["toolu_A"]);
  });
});
