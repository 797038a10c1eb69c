import { describe, expect, it } from "vitest";
import {
  countingIds,
  openaiRequest,
  parseSse,
  postJson,
  type SseEvent,
  streamOpenai,
  useDoubles,
} from "./helpers.js";

const start = useDoubles();

const codexTools = [
  { type: "function", name: "exec_command", parameters: { type: "object" } },
  {
    type: "namespace",
    name: "mcp__floot",
    tools: [
      { type: "function", name: "status", parameters: { type: "object" } },
      { type: "function", name: "echo", parameters: { type: "object" } },
    ],
  },
];

function ofType(events: SseEvent[], type: string): Record<string, unknown>[] {
  return events.filter((event) => event.event === type).map((event) => event.data);
}

describe("OpenAI Responses streaming", () => {
  it("streams a message item with output_text deltas and completes with the item", async () => {
    const double = await start({
      steps: [{ response: { events: [{ type: "text", text: "Hello codex!", chunks: 3 }] } }],
    });
    const response = await postJson(`${double.url}/v1/responses`, openaiRequest("hi"));
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const raw = await response.text();
    for (const frame of raw.split("\n\n").filter(Boolean)) {
      expect(frame).toMatch(/^event: (\S+)\ndata: \{"type":"\1"/);
    }
    const parsed = parseSse(raw);
    expect(parsed.map((event) => event.event)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(ofType(parsed, "response.output_text.delta").map((event) => event.delta)).toEqual([
      "Hell",
      "o co",
      "dex!",
    ]);
    const added = ofType(parsed, "response.output_item.added")[0]!.item as Record<string, unknown>;
    expect(added).toMatchObject({ type: "message", role: "assistant", content: [] });
    const done = ofType(parsed, "response.output_item.done")[0]!.item as Record<string, unknown>;
    expect(done).toMatchObject({
      id: added.id,
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "Hello codex!" }],
    });
    const completed = ofType(parsed, "response.completed")[0]!.response as Record<string, unknown>;
    expect(completed).toMatchObject({ status: "completed", model: "gpt-test-model", output: [done] });
    expect(completed.id).toBe((ofType(parsed, "response.created")[0]!.response as { id: string }).id);
  });

  it("emits a function_call with call_id and streamed arguments", async () => {
    const double = await start({
      steps: [
        {
          response: {
            events: [{ type: "tool_use", name: "exec_command", input: { cmd: "echo x" }, chunks: 2 }],
          },
        },
      ],
    });
    const events = await streamOpenai(double, openaiRequest("run", { tools: codexTools }));

    const argumentDeltas = ofType(events, "response.function_call_arguments.delta").map(
      (event) => event.delta,
    );
    expect(argumentDeltas).toHaveLength(2);
    expect(JSON.parse(argumentDeltas.join(""))).toEqual({ cmd: "echo x" });
    const item = ofType(events, "response.output_item.done")[0]!.item as Record<string, unknown>;
    expect(item).toMatchObject({
      type: "function_call",
      name: "exec_command",
      arguments: '{"cmd":"echo x"}',
    });
    expect(item).not.toHaveProperty("namespace");
    expect(item.call_id).toMatch(/^call_/);
    expect(double.requests[0]!.response.toolCalls).toEqual([
      { id: item.call_id, name: "exec_command", input: { cmd: "echo x" } },
    ]);
  });

  it("resolves nameFrom to a namespaced MCP tool and emits codex's namespace form", async () => {
    const double = await start({
      steps: [
        {
          response: {
            events: [
              { type: "tool_use", id: "call_fixed", nameFrom: { endsWith: "__echo" }, input: { text: "hi" } },
            ],
          },
        },
      ],
    });
    const events = await streamOpenai(double, openaiRequest("mcp", { tools: codexTools }));

    const item = ofType(events, "response.output_item.done")[0]!.item;
    expect(item).toMatchObject({
      type: "function_call",
      call_id: "call_fixed",
      namespace: "mcp__floot",
      name: "echo",
      arguments: '{"text":"hi"}',
    });
    expect(double.requests[0]!.response.toolCalls).toEqual([
      { id: "call_fixed", name: "echo", namespace: "mcp__floot", input: { text: "hi" } },
    ]);
  });

  it("emits a reasoning item with summary deltas when thinking is scripted", async () => {
    const double = await start({
      steps: [
        {
          response: {
            events: [
              { type: "thinking", thinking: "step by step", chunks: 2 },
              { type: "text", text: "ok" },
            ],
          },
        },
      ],
    });
    const events = await streamOpenai(double, openaiRequest("think"));

    expect((ofType(events, "response.output_item.added")[0]!.item as { type: string }).type).toBe(
      "reasoning",
    );
    expect(
      ofType(events, "response.reasoning_summary_text.delta")
        .map((event) => event.delta)
        .join(""),
    ).toBe("step by step");
    expect(ofType(events, "response.reasoning_summary_text.delta")[0]).toMatchObject({
      summary_index: 0,
      output_index: 0,
    });
    expect(ofType(events, "response.output_item.done")[0]!.item).toMatchObject({
      type: "reasoning",
      summary: [{ type: "summary_text", text: "step by step" }],
    });
    expect(ofType(events, "response.output_item.added")[1]).toMatchObject({
      output_index: 1,
      item: { type: "message" },
    });
  });

  it("reports the scripted usage in response.completed", async () => {
    const double = await start({
      steps: [
        {
          response: {
            events: [{ type: "text", text: "x" }],
            usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 30 },
          },
        },
      ],
    });
    const events = await streamOpenai(double, openaiRequest("hi"));
    expect((ofType(events, "response.completed")[0]!.response as Record<string, unknown>).usage).toEqual({
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 30 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 120,
    });
  });

  it("answers stream:false with the whole response object", async () => {
    const double = await start(
      { steps: [{ response: { events: [{ type: "text", text: "whole" }] } }] },
      { generateId: countingIds() },
    );
    const response = await postJson(`${double.url}/v1/responses`, openaiRequest("hi", { stream: false }));
    expect(await response.json()).toMatchObject({
      id: "resp_test1",
      object: "response",
      status: "completed",
      output: [{ id: "msg_test2", type: "message", content: [{ type: "output_text", text: "whole" }] }],
    });
  });
});
