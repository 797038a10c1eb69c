import { describe, expect, it } from "vitest";
import {
  anthropicRequest,
  openaiRequest,
  postJson,
  streamAnthropic,
  streamOpenai,
  textOnly,
  useDoubles,
} from "./helpers.js";

const start = useDoubles();

describe("request recording", () => {
  it("records each request with its route, query, lower-cased headers, parsed body and clock time", async () => {
    let clock = 1_000;
    const double = await start(
      { steps: [{ repeat: true, response: textOnly("ok") }] },
      { now: () => (clock += 10) },
    );
    const body = anthropicRequest("hello");
    await streamAnthropic(double, body);
    await postJson(`${double.url}/v1/responses`, openaiRequest("again"), { "X-Custom": "Value" }).then((r) =>
      r.text(),
    );

    expect(double.requests).toHaveLength(2);
    expect(double.requests[0]).toMatchObject({
      index: 0,
      api: "anthropic",
      method: "POST",
      path: "/v1/messages",
      query: { beta: "true" },
      body,
      receivedAt: 1_010,
      response: { status: 200, stepIndex: 0, toolCalls: [] },
    });
    expect(double.requests[0]!.headers["content-type"]).toBe("application/json");
    expect(double.requests[1]).toMatchObject({
      index: 1,
      api: "openai",
      path: "/v1/responses",
      receivedAt: 1_020,
    });
    expect(double.requests[1]!.headers["x-custom"]).toBe("Value");
  });

  it("records the generated tool ids the client was sent, distinct per call", async () => {
    const double = await start({
      steps: [
        {
          repeat: true,
          response: {
            events: [
              { type: "tool_use", name: "Read", input: { path: "a" } },
              { type: "tool_use", name: "Read", input: { path: "b" } },
            ],
          },
        },
      ],
    });
    const anthropicEvents = await streamAnthropic(double, anthropicRequest("x"));
    await streamOpenai(double, openaiRequest("y"));

    const sentIds = anthropicEvents
      .filter((event) => event.event === "content_block_start")
      .map((event) => (event.data.content_block as { id: string }).id);
    const anthropicIds = double.requests[0]!.response.toolCalls.map((call) => call.id);
    const openaiIds = double.requests[1]!.response.toolCalls.map((call) => call.id);
    expect(anthropicIds).toEqual(sentIds);
    expect(anthropicIds.every((id) => id.startsWith("toolu_"))).toBe(true);
    expect(openaiIds.every((id) => id.startsWith("call_"))).toBe(true);
    expect(new Set([...anthropicIds, ...openaiIds]).size).toBe(4);
  });
});

describe("waitForRequest", () => {
  it("resolves with a request recorded earlier or later", async () => {
    const double = await start({ steps: [{ repeat: true, response: textOnly("ok") }] });
    await streamAnthropic(double, anthropicRequest("early"));
    const early = await double.waitForRequest((request) => request.api === "anthropic");
    expect(early.index).toBe(0);

    const later = double.waitForRequest((request) => request.api === "openai", { timeoutMs: 2000 });
    await streamOpenai(double, openaiRequest("late"));
    expect((await later).index).toBe(1);
  });

  it("rejects on timeout with a message listing what was seen", async () => {
    const double = await start({ steps: [{ response: textOnly("ok") }] });
    await streamAnthropic(double, anthropicRequest("only"));
    await expect(
      double.waitForRequest((request) => request.api === "openai", { timeoutMs: 50 }),
    ).rejects.toThrow("model-double: no matching request within 50 ms; saw #0 anthropic POST /v1/messages");
  });

  it("rejects pending waits when the double closes", async () => {
    const double = await start({ steps: [] });
    const pending = double.waitForRequest(() => true, { timeoutMs: 5000 });
    await double.close();
    await expect(pending).rejects.toThrow("model-double: the double closed; saw no requests");
  });
});
