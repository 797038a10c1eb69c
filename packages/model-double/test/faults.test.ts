import { describe, expect, it } from "vitest";
import {
  anthropicRequest,
  openaiRequest,
  parseSse,
  postJson,
  streamAnthropic,
  textOnly,
  useDoubles,
} from "./helpers.js";

const start = useDoubles();

/** Reads a streaming body incrementally, so a test can look at what arrived so far. */
function incrementalReader(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let ended = false;
  const pump = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    ended = true;
  })();
  return {
    get text() {
      return text;
    },
    get ended() {
      return ended;
    },
    /** Settles when the body ends: resolves on a clean end, rejects when the stream was cut. */
    finished: pump,
    async waitFor(fragment: string, timeoutMs = 2000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!text.includes(fragment)) {
        if (Date.now() > deadline) throw new Error(`never saw ${fragment}; got ${text}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  };
}

describe("scripted HTTP errors", () => {
  it("sends an Anthropic rate_limit_error with retry-after", async () => {
    const double = await start({
      steps: [
        { response: { error: { status: 429, message: "slow down", retryAfter: 7 } } },
        { response: textOnly("ok") },
      ],
    });
    const response = await postJson(`${double.url}/v1/messages?beta=true`, anthropicRequest("hi"));
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("7");
    expect(await response.json()).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: "slow down" },
    });
    expect(double.requests[0]!.response).toMatchObject({ status: 429, stepIndex: 0 });
    expect(double.failures).toEqual([]);
  });

  it("derives overloaded_error for 529 and leaves retry-after out when not scripted", async () => {
    const double = await start({ steps: [{ response: { error: { status: 529, message: "busy" } } }] });
    const response = await postJson(`${double.url}/v1/messages`, anthropicRequest("hi"));
    expect(response.status).toBe(529);
    expect(response.headers.get("retry-after")).toBeNull();
    expect(await response.json()).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "busy" },
    });
  });

  it("uses the OpenAI error shape on the Responses endpoint", async () => {
    const double = await start({
      steps: [{ response: { error: { status: 429, message: "quota", retryAfter: 2 } } }],
    });
    const response = await postJson(`${double.url}/v1/responses`, openaiRequest("hi"));
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("2");
    expect(await response.json()).toEqual({
      error: { message: "quota", type: "requests", param: null, code: "rate_limit_exceeded" },
    });
  });
});

describe("delays, stalls and drops", () => {
  it("deltaDelayMs pauses between a text's deltas inside its one block", async () => {
    const double = await start({
      steps: [
        { response: { events: [{ type: "text", text: "one two three", chunks: 3, deltaDelayMs: 100 }] } },
      ],
    });
    const startedAt = Date.now();
    const events = await streamAnthropic(double, anthropicRequest("hi"));
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(190);
    expect(events.filter((event) => event.event === "content_block_start")).toHaveLength(1);
    expect(events.filter((event) => event.event === "content_block_delta")).toHaveLength(3);
  });

  it("waits the scripted delay between events", async () => {
    const double = await start({
      steps: [
        {
          response: {
            events: [
              { type: "text", text: "before" },
              { type: "delay", ms: 150 },
              { type: "text", text: "after" },
            ],
          },
        },
      ],
    });
    const startedAt = Date.now();
    const events = await streamAnthropic(double, anthropicRequest("hi"));
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(140);
    expect(events.at(-1)!.event).toBe("message_stop");
  });

  it("holds a stalled stream open until close() ends it", async () => {
    const double = await start({
      steps: [
        {
          response: {
            events: [
              { type: "text", text: "partial answer" },
              { type: "stall" },
              { type: "text", text: "never" },
            ],
          },
        },
      ],
    });
    const response = await postJson(`${double.url}/v1/messages`, anthropicRequest("hi"));
    const body = incrementalReader(response);
    await body.waitFor("content_block_stop");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(body.ended).toBe(false);
    expect(body.text).not.toContain("never");

    await double.close();
    await expect(body.finished).rejects.toThrow();
    expect(body.text).not.toContain("message_stop");
  });

  it("resumes a stall that has ms after that time", async () => {
    const double = await start({
      steps: [
        {
          response: {
            events: [
              { type: "stall", ms: 50 },
              { type: "text", text: "resumed" },
            ],
          },
        },
      ],
    });
    const response = await postJson(`${double.url}/v1/responses`, openaiRequest("hi"));
    const events = parseSse(await response.text());
    expect(events.at(-1)!.event).toBe("response.completed");
  });

  it("drops the connection mid-message so the client sees an aborted stream", async () => {
    const double = await start({
      steps: [
        {
          response: {
            events: [
              { type: "text", text: "cut here", chunks: 1 },
              { type: "drop" },
              { type: "text", text: "lost" },
            ],
          },
        },
      ],
    });
    const response = await postJson(`${double.url}/v1/messages`, anthropicRequest("hi"));
    expect(response.status).toBe(200);
    const body = incrementalReader(response);
    await expect(body.finished).rejects.toThrow();
    expect(body.text).toContain("cut here");
    expect(body.text).not.toContain("lost");
    expect(body.text).not.toContain("message_stop");
  });

  it("applies pauses before a non-streaming answer too", async () => {
    const double = await start({
      steps: [{ response: { events: [{ type: "drop" }, { type: "text", text: "x" }] } }],
    });
    await expect(
      postJson(`${double.url}/v1/messages`, anthropicRequest("hi", { stream: false })),
    ).rejects.toThrow();
  });
});

describe("server lifecycle and routing", () => {
  it("closes idempotently and refuses connections afterwards", async () => {
    const double = await start({ steps: [] });
    const first = double.close();
    expect(double.close()).toBe(first);
    await first;
    await expect(postJson(`${double.url}/v1/messages`, anthropicRequest("hi"))).rejects.toThrow();
  });

  it("answers unknown paths with a 404 JSON error and records them", async () => {
    const double = await start({ steps: [{ response: textOnly("unused") }] });
    const response = await fetch(`${double.url}/v1/models`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    expect(double.requests[0]).toMatchObject({ api: "unknown", method: "GET", path: "/v1/models" });
  });

  it("refuses a body that is not JSON with a 400 and reports it", async () => {
    const double = await start({ steps: [{ response: textOnly("unused") }] });
    const response = await fetch(`${double.url}/v1/messages`, { method: "POST", body: "{nope" });
    expect(response.status).toBe(400);
    expect(double.failures[0]!.response.failure).toBe("model-double: request #0 body is not JSON");
    expect(double.failures[0]!.body).toBe("{nope");
  });
});
