import { describe, expect, it } from "vitest";
import { textReply, toolTurnScript } from "../src/index.js";
import {
  anthropicRequest,
  openaiRequest,
  parseSse,
  postJson,
  type SseEvent,
  streamAnthropic,
  streamOpenai,
  textOnly,
  useDoubles,
} from "./helpers.js";

const start = useDoubles();

function anthropicText(events: SseEvent[]): string {
  return events
    .filter((event) => event.event === "content_block_delta")
    .map((event) => (event.data.delta as { text?: string }).text ?? "")
    .join("");
}

function openaiText(events: SseEvent[]): string {
  return events
    .filter((event) => event.event === "response.output_text.delta")
    .map((event) => event.data.delta as string)
    .join("");
}

function withToolResult(toolUseId: string): Record<string, unknown> {
  return anthropicRequest("", {
    messages: [
      { role: "user", content: "run it" },
      { role: "assistant", content: [{ type: "tool_use", id: toolUseId, name: "Bash", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: toolUseId, content: "ok" }] },
    ],
  });
}

describe("step matching", () => {
  it("consumes positional steps in order across both APIs", async () => {
    const double = await start({
      steps: [{ response: textOnly("first") }, { response: textOnly("second") }],
    });
    expect(anthropicText(await streamAnthropic(double, anthropicRequest("a")))).toBe("first");
    expect(openaiText(await streamOpenai(double, openaiRequest("b")))).toBe("second");
    expect(double.requests.map((request) => request.response.stepIndex)).toEqual([0, 1]);
  });

  it("lets a toolResultFor step claim the request carrying that tool_result ahead of positional steps", async () => {
    const double = await start({
      steps: [
        { response: textOnly("positional") },
        { match: { toolResultFor: "toolu_42" }, response: textOnly("after tool") },
      ],
    });
    expect(anthropicText(await streamAnthropic(double, withToolResult("toolu_42")))).toBe("after tool");
    expect(anthropicText(await streamAnthropic(double, withToolResult("toolu_other")))).toBe("positional");
  });

  it("matches toolResultFor against an OpenAI function_call_output", async () => {
    const double = await start({
      steps: [{ match: { toolResultFor: "call_7" }, response: textOnly("saw output") }],
    });
    const body = openaiRequest("go", {
      input: [
        { type: "message", role: "user", content: [{ type: "input_text", text: "go" }] },
        { type: "function_call", call_id: "call_7", name: "exec_command", arguments: "{}" },
        { type: "function_call_output", call_id: "call_7", output: "done" },
      ],
    });
    expect(openaiText(await streamOpenai(double, body))).toBe("saw output");
  });

  it("matches lastUserTextIncludes on the latest user turn, skipping a trailing system message", async () => {
    const double = await start({
      steps: [
        { match: { lastUserTextIncludes: "[tool]" }, response: textOnly("marker seen") },
        { repeat: true, response: textOnly("fallback") },
      ],
    });
    const claudeShaped = anthropicRequest("", {
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "<system-reminder>x</system-reminder>" },
            { type: "text", text: "[tool] go" },
          ],
        },
        { role: "system", content: [{ type: "text", text: "# Environment" }] },
      ],
    });
    const earlierTurnOnly = anthropicRequest("", {
      messages: [
        { role: "user", content: "[tool] old" },
        { role: "assistant", content: "answered" },
        { role: "user", content: "new question" },
      ],
    });
    expect(anthropicText(await streamAnthropic(double, earlierTurnOnly))).toBe("fallback");
    expect(anthropicText(await streamAnthropic(double, claudeShaped))).toBe("marker seen");
    expect(openaiText(await streamOpenai(double, openaiRequest("[tool] again")))).toBe("fallback");
  });

  it("treats a request ending in a tool result as having no user text", async () => {
    const double = await start({
      steps: [{ match: { lastUserTextIncludes: "run it" }, repeat: true, response: textOnly("marker") }],
    });
    const response = await postJson(`${double.url}/v1/messages`, withToolResult("toolu_1"));
    expect(response.status).toBe(500);
  });

  it("keeps repeat steps available and stops consuming at a repeating positional step", async () => {
    const double = await start({
      steps: [
        { match: { api: "openai" }, repeat: true, response: textOnly("openai always") },
        { response: textOnly("once") },
        { repeat: true, response: textOnly("default") },
        { response: textOnly("unreachable") },
      ],
    });
    const answers = [
      anthropicText(await streamAnthropic(double, anthropicRequest("1"))),
      openaiText(await streamOpenai(double, openaiRequest("2"))),
      anthropicText(await streamAnthropic(double, anthropicRequest("3"))),
      openaiText(await streamOpenai(double, openaiRequest("4"))),
      anthropicText(await streamAnthropic(double, anthropicRequest("5"))),
    ];
    expect(answers).toEqual(["once", "openai always", "default", "openai always", "default"]);
  });

  it("combines match conditions and accepts a predicate function", async () => {
    const double = await start({
      steps: [
        { match: { api: "anthropic", lastUserTextIncludes: "both" }, response: textOnly("both held") },
        {
          match: (request) => request.headers["x-scenario"] === "special",
          response: textOnly("predicate held"),
        },
        { repeat: true, response: textOnly("neither") },
      ],
    });
    expect(openaiText(await streamOpenai(double, openaiRequest("both")))).toBe("neither");
    const special = await postJson(`${double.url}/v1/messages`, anthropicRequest("x"), {
      "x-scenario": "special",
    });
    expect(anthropicText(parseSse(await special.text()))).toBe("predicate held");
    expect(anthropicText(await streamAnthropic(double, anthropicRequest("both")))).toBe("both held");
  });

  it("resolves nameFrom against the request's tools", async () => {
    const double = await start({
      steps: [
        {
          response: {
            events: [{ type: "tool_use", nameFrom: { endsWith: "__bash" }, input: { cmd: "pwd" } }],
          },
        },
        {
          response: {
            events: [{ type: "tool_use", nameFrom: { includes: "floot", endsWith: "__echo" }, input: {} }],
          },
        },
      ],
    });
    const tools = [
      { name: "Read" },
      { name: "mcp__shell__bash" },
      { name: "mcp__floot__echo" },
      { name: "mcp__x__echo" },
    ];
    await streamAnthropic(double, anthropicRequest("a", { tools }));
    await streamAnthropic(double, anthropicRequest("b", { tools }));
    expect(double.requests.map((request) => request.response.toolCalls[0]!.name)).toEqual([
      "mcp__shell__bash",
      "mcp__floot__echo",
    ]);
  });

  it("fails a request whose nameFrom matches no offered tool, saying so", async () => {
    const double = await start({
      steps: [{ response: { events: [{ type: "tool_use", nameFrom: { equals: "Bash" }, input: {} }] } }],
    });
    const response = await postJson(
      `${double.url}/v1/messages`,
      anthropicRequest("a", { tools: [{ name: "bash" }] }),
    );
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toBe('model-double: nameFrom {"equals":"Bash"} matched no tool in request #0');
    expect(double.failures.map((request) => request.index)).toEqual([0]);
  });
});

describe("unmatched requests", () => {
  it("answers with an API-shaped 500 naming the request and records it", async () => {
    const double = await start({ steps: [{ response: textOnly("only one") }] });
    await streamAnthropic(double, anthropicRequest("first"));

    const anthropic = await postJson(`${double.url}/v1/messages?beta=true`, anthropicRequest("second"));
    expect(anthropic.status).toBe(500);
    expect(await anthropic.json()).toEqual({
      type: "error",
      error: { type: "api_error", message: "model-double: no script step matched request #1" },
    });

    const openai = await postJson(`${double.url}/v1/responses`, openaiRequest("third"));
    expect(openai.status).toBe(500);
    expect(((await openai.json()) as { error: { message: string; type: string } }).error).toMatchObject({
      message: "model-double: no script step matched request #2",
      type: "server_error",
    });

    expect(double.unmatched.map((request) => request.index)).toEqual([1, 2]);
    expect(double.unmatched[0]!.response).toMatchObject({
      status: 500,
      stepIndex: null,
      failure: "model-double: no script step matched request #1",
    });
    expect(double.requests).toHaveLength(3);
  });
});

describe("a throwing match predicate", () => {
  it("fails that request with a message instead of crashing the double", async () => {
    const double = await start({
      steps: [
        {
          match: () => {
            throw new Error("boom");
          },
          response: textOnly("never"),
        },
      ],
    });
    const response = await postJson(`${double.url}/v1/messages`, anthropicRequest("x"));
    expect(response.status).toBe(500);
    expect(double.failures[0]!.response.failure).toBe(
      "model-double: a match predicate threw on request #0: Error: boom",
    );
  });
});

describe("toolTurnScript", () => {
  it("calls each tool once the previous result is back, then answers", async () => {
    const script = toolTurnScript(
      [
        { id: "toolu_a", name: "Bash", input: { command: "a" } },
        { id: "toolu_b", name: "mcp__floot__echo", input: { text: "b" } },
      ],
      "done",
    );
    expect(script.steps).toEqual([
      { match: { toolResultFor: "toolu_b" }, response: { events: [{ type: "text", text: "done" }] } },
      {
        match: { toolResultFor: "toolu_a" },
        response: {
          events: [{ type: "tool_use", id: "toolu_b", name: "mcp__floot__echo", input: { text: "b" } }],
        },
      },
      { response: { events: [{ type: "tool_use", id: "toolu_a", name: "Bash", input: { command: "a" } }] } },
    ]);
    const double = await start(script);
    await streamAnthropic(double, anthropicRequest("go"));
    const both = (ids: string[]) =>
      anthropicRequest("", {
        messages: [
          { role: "user", content: "go" },
          {
            role: "user",
            content: ids.map((id) => ({ type: "tool_result", tool_use_id: id, content: "ok" })),
          },
        ],
      });
    await streamAnthropic(double, both(["toolu_a"]));
    expect(anthropicText(await streamAnthropic(double, both(["toolu_a", "toolu_b"])))).toBe("done");
    expect(double.requests.map((request) => request.response.stepIndex)).toEqual([2, 1, 0]);
  });
});

describe("textReply", () => {
  it("answers the request whose last user text includes the marker, once unless told to repeat", async () => {
    expect(textReply("[a]", "A")).toEqual({
      match: { lastUserTextIncludes: "[a]" },
      response: { events: [{ type: "text", text: "A" }] },
    });
    const double = await start({ steps: [textReply("[a]", "A"), textReply("[b]", "B", { repeat: true })] });
    expect(anthropicText(await streamAnthropic(double, anthropicRequest("say [b]")))).toBe("B");
    expect(anthropicText(await streamAnthropic(double, anthropicRequest("say [a]")))).toBe("A");
    expect(anthropicText(await streamAnthropic(double, anthropicRequest("again [b]")))).toBe("B");
    await expect(streamAnthropic(double, anthropicRequest("again [a]"))).rejects.toThrow(
      /no script step matched/,
    );
    expect(double.requests.map((request) => request.response.stepIndex)).toEqual([1, 0, 1, null]);
  });
});
