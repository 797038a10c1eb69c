import { describe, expect, it } from "vitest";
import { anthropicRequest, countingIds, parseSse, postJson, streamAnthropic, useDoubles } from "./helpers.js";

const start = useDoubles();

function deltasOf(events: { event: string; data: Record<string, unknown> }[], type: string, field: string) {
  return events
    .filter((event) => event.event === "content_block_delta")
    .map((event) => event.data.delta as Record<string, unknown>)
    .filter((delta) => delta.type === type)
    .map((delta) => delta[field] as string);
}

describe("Anthropic Messages streaming", () => {
  it("streams text in the scripted number of deltas inside one content block", async () => {
    const double = await start({
      steps: [{ response: { events: [{ type: "text", text: "Hello, streaming world!", chunks: 4 }] } }],
    });
    const response = await postJson(`${double.url}/v1/messages?beta=true`, anthropicRequest("hi"));
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const raw = await response.text();
    const events = parseSse(raw);

    expect(events.map((event) => event.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    for (const event of events) expect(event.data.type).toBe(event.event);
    expect(raw.startsWith("event: message_start\ndata: {")).toBe(true);
    expect(deltasOf(events, "text_delta", "text")).toHaveLength(4);
    expect(deltasOf(events, "text_delta", "text").join("")).toBe("Hello, streaming world!");
    expect(events[1]!.data).toEqual({
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    });

    const message = events[0]!.data.message as Record<string, unknown>;
    expect(message).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-test-model",
      content: [],
      stop_reason: null,
    });
    expect(message.id).toMatch(/^msg_/);
    expect(events.at(-2)!.data.delta).toEqual({ stop_reason: "end_turn", stop_sequence: null });
  });

  it("streams tool input as input_json_delta chunks that reassemble to the scripted input", async () => {
    const input = { command: "ls -la /tmp", description: "list", nested: { depth: [1, 2, 3] } };
    const double = await start({
      steps: [
        {
          response: {
            events: [
              { type: "text", text: "Let me look." },
              { type: "tool_use", name: "Bash", input, chunks: 5 },
            ],
          },
        },
      ],
    });
    const events = await streamAnthropic(double, anthropicRequest("list files"));

    const partials = deltasOf(events, "input_json_delta", "partial_json");
    expect(partials).toHaveLength(5);
    expect(JSON.parse(partials.join(""))).toEqual(input);
    const toolStart = events.find(
      (event) =>
        event.event === "content_block_start" &&
        (event.data.content_block as { type: string }).type === "tool_use",
    )!;
    expect(toolStart.data.index).toBe(1);
    const block = toolStart.data.content_block as Record<string, unknown>;
    expect(block).toMatchObject({ type: "tool_use", name: "Bash", input: {} });
    expect(block.id).toMatch(/^toolu_/);
    expect(double.requests[0]!.response.toolCalls).toEqual([{ id: block.id, name: "Bash", input }]);
    expect((events.at(-2)!.data.delta as Record<string, unknown>).stop_reason).toBe("tool_use");
  });

  it("streams inputJson verbatim, even when it is not valid JSON", async () => {
    const inputJson = '{"command": "printf X"';
    const double = await start({
      steps: [
        { response: { events: [{ type: "tool_use", name: "Bash", input: {}, inputJson, chunks: 2 }] } },
      ],
    });
    const events = await streamAnthropic(double, anthropicRequest("go"));
    const partials = deltasOf(events, "input_json_delta", "partial_json");
    expect(partials).toHaveLength(2);
    expect(partials.join("")).toBe(inputJson);
  });

  it("sends scripted headers with a streamed answer and with an error", async () => {
    const headers = { "anthropic-ratelimit-unified-status": "allowed_warning" };
    const double = await start({
      steps: [
        { response: { events: [{ type: "text", text: "hi" }], headers } },
        { response: { error: { status: 429, message: "slow down", retryAfter: 3 }, headers } },
      ],
    });
    const answer = await postJson(`${double.url}/v1/messages`, anthropicRequest("one"));
    expect(answer.headers.get("anthropic-ratelimit-unified-status")).toBe("allowed_warning");
    expect(answer.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await answer.text();
    const refused = await postJson(`${double.url}/v1/messages`, anthropicRequest("two"));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("anthropic-ratelimit-unified-status")).toBe("allowed_warning");
    expect(refused.headers.get("retry-after")).toBe("3");
  });

  it("streams thinking with thinking_delta and signature_delta before the text block", async () => {
    const double = await start({
      steps: [
        {
          response: {
            events: [
              {
                type: "thinking",
                thinking: "Weighing the options carefully",
                signature: "sig-123",
                chunks: 3,
              },
              { type: "text", text: "Decided." },
            ],
          },
        },
      ],
    });
    const events = await streamAnthropic(double, anthropicRequest("think"));

    expect(events[1]!.data.content_block).toEqual({ type: "thinking", thinking: "", signature: "" });
    expect(deltasOf(events, "thinking_delta", "thinking")).toHaveLength(3);
    expect(deltasOf(events, "thinking_delta", "thinking").join("")).toBe("Weighing the options carefully");
    expect(deltasOf(events, "signature_delta", "signature")).toEqual(["sig-123"]);
    const blockStarts = events.filter((event) => event.event === "content_block_start");
    expect(
      blockStarts.map((event) => [event.data.index, (event.data.content_block as { type: string }).type]),
    ).toEqual([
      [0, "thinking"],
      [1, "text"],
    ]);
  });

  it("reports the scripted usage exactly in message_start and message_delta", async () => {
    const usage = {
      input_tokens: 123,
      output_tokens: 45,
      cache_read_input_tokens: 67,
      cache_creation_input_tokens: 8,
    };
    const double = await start({ steps: [{ response: { events: [{ type: "text", text: "x" }], usage } }] });
    const events = await streamAnthropic(double, anthropicRequest("hi"));

    expect((events[0]!.data.message as Record<string, unknown>).usage).toEqual(usage);
    expect(events.find((event) => event.event === "message_delta")!.data.usage).toEqual(usage);
  });

  it("uses the scripted stop reason", async () => {
    const double = await start({
      steps: [{ response: { events: [{ type: "text", text: "cut" }], stopReason: "max_tokens" } }],
    });
    const events = await streamAnthropic(double, anthropicRequest("hi"));
    expect((events.at(-2)!.data.delta as Record<string, unknown>).stop_reason).toBe("max_tokens");
  });

  it("answers a request without stream:true with the whole message as JSON", async () => {
    const double = await start(
      {
        steps: [
          {
            response: {
              events: [
                { type: "thinking", thinking: "hmm" },
                { type: "text", text: "Plain answer" },
                { type: "tool_use", name: "Read", input: { path: "/a" } },
              ],
              usage: { input_tokens: 3, output_tokens: 4 },
            },
          },
        ],
      },
      { generateId: countingIds() },
    );
    const response = await postJson(`${double.url}/v1/messages`, anthropicRequest("hi", { stream: false }));
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({
      id: "msg_test2",
      type: "message",
      role: "assistant",
      model: "claude-test-model",
      content: [
        { type: "thinking", thinking: "hmm", signature: "model-double-signature" },
        { type: "text", text: "Plain answer" },
        { type: "tool_use", id: "toolu_test1", name: "Read", input: { path: "/a" } },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: {
        input_tokens: 3,
        output_tokens: 4,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    });
  });

  it("counts tokens without consuming a script step", async () => {
    const double = await start({
      steps: [{ response: { events: [{ type: "text", text: "after counting" }] } }],
    });
    const counted = await postJson(
      `${double.url}/v1/messages/count_tokens?beta=true`,
      anthropicRequest("x".repeat(400)),
    );
    expect(counted.status).toBe(200);
    const { input_tokens } = (await counted.json()) as { input_tokens: number };
    expect(input_tokens).toBeGreaterThan(100);

    const events = await streamAnthropic(double, anthropicRequest("hi"));
    expect(deltasOf(events, "text_delta", "text").join("")).toBe("after counting");
    expect(double.requests.map((request) => request.api)).toEqual(["count_tokens", "anthropic"]);
  });
});
