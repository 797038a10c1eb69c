import { describe, expect, it } from "vitest";
import { cacheStability, type ModelDouble, promptPrefixUnits } from "../src/index.js";
import { postJson, useDoubles } from "./helpers.js";

const start = useDoubles();
const cached = { type: "ephemeral" };

const system = [{ type: "text", text: "You are a test.", cache_control: cached }];
const tools = [{ name: "bash", description: "run", input_schema: { type: "object" } }];
const text = (value: string, breakpoint = false) => ({
  type: "text",
  text: value,
  ...(breakpoint ? { cache_control: cached } : {}),
});

/** One Messages request; `turns` alternate user/assistant, the last block of the last one cached. */
function body(turns: Array<Array<Record<string, unknown>>>, extra: Record<string, unknown> = {}) {
  return {
    model: "claude-test-model",
    max_tokens: 1024,
    stream: true,
    system,
    tools,
    messages: turns.map((content, position) => ({
      role: position % 2 === 0 ? "user" : "assistant",
      content,
    })),
    ...extra,
  };
}

async function send(bodies: Array<Record<string, unknown>>): Promise<ModelDouble> {
  const double = await start({
    steps: [{ repeat: true, response: { events: [{ type: "text", text: "ok" }] } }],
  });
  for (const request of bodies) await (await postJson(`${double.url}/v1/messages`, request)).text();
  return double;
}

describe("prompt prefix units", () => {
  it("orders settings, tools, system, then message blocks; cache_control marks a breakpoint but is not content", () => {
    const units = promptPrefixUnits(body([[text("one", true)]]));
    expect(units.map((unit) => Object.keys(JSON.parse(unit.key))[0])).toEqual([
      "model",
      "tool",
      "system",
      "block",
    ]);
    expect(units.map((unit) => unit.breakpoint)).toEqual([false, false, true, true]);
    expect(promptPrefixUnits(body([[text("one")]])).map((unit) => unit.key)).toEqual(
      units.map((unit) => unit.key),
    );
  });

  it("reads a string system prompt and string message content as text blocks", () => {
    const asStrings = promptPrefixUnits({
      model: "m",
      system: "sys",
      messages: [{ role: "user", content: "hi" }],
    });
    const asBlocks = promptPrefixUnits({
      model: "m",
      system: [{ type: "text", text: "sys" }],
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    });
    expect(asStrings).toEqual(asBlocks);
  });
});

describe("cache stability", () => {
  it("a conversation that only grows rebuilds nothing, wherever the last breakpoint moves", async () => {
    const double = await send([
      body([[text("one", true)]]),
      body([[text("one")], [text("answer")], [text("two", true)]]),
      // A later text in the same user message (a steer beside a tool result) keeps the prefix too.
      body([[text("one")], [text("answer")], [text("two"), text("steer", true)]]),
    ]);
    const { requests, rebuilds } = cacheStability(double.requests);
    expect(rebuilds).toBe(0);
    expect(requests.map((entry) => [entry.commonWithPrevious, entry.previousCachedPrefix])).toEqual([
      [null, null],
      [4, 4],
      [6, 6],
    ]);
  });

  it("a changed system prompt, model or earlier message cuts the cached prefix: a rebuild, with what is re-cached", async () => {
    const double = await send([
      body([[text("one", true)]]),
      body([[text("one", true)]], {
        system: [{ type: "text", text: "You are another test.", cache_control: cached }],
      }),
      body([[text("one", true)]], {
        system: [{ type: "text", text: "You are another test.", cache_control: cached }],
        model: "other",
      }),
      body([[text("ONE")], [text("answer")], [text("two", true)]], {
        system: [{ type: "text", text: "You are another test.", cache_control: cached }],
        model: "other",
      }),
    ]);
    const { requests, rebuilds } = cacheStability(double.requests);
    expect(requests.map((entry) => entry.rebuild)).toEqual([false, true, true, true]);
    expect(rebuilds).toBe(3);
    expect(requests[1]).toMatchObject({ commonWithPrevious: 2, previousCachedPrefix: 4 });
    expect(requests[1]!.rebuiltChars).toBeGreaterThan("You are a test.".length);
    expect(requests[2]).toMatchObject({ commonWithPrevious: 0 });
    expect(requests[3]).toMatchObject({ commonWithPrevious: 3 });
  });

  it("a request with a shorter prefix than the previous one cached is a rebuild even when nothing changed before it", async () => {
    const double = await send([
      body([[text("one")], [text("answer")], [text("two", true)]]),
      body([[text("one")], [text("three", true)]]),
    ]);
    expect(cacheStability(double.requests).requests[1]).toMatchObject({
      commonWithPrevious: 4,
      previousCachedPrefix: 6,
      rebuild: true,
    });
  });

  it("compares a request only with its own conversation; requests outside every conversation are skipped", async () => {
    const double = await send([
      body([[text("a1", true)]]),
      body([[text("b1", true)]]),
      body([[text("summary", true)]]),
      body([[text("a1")], [text("x")], [text("a2", true)]]),
    ]);
    await (await postJson(`${double.url}/v1/messages/count_tokens`, body([[text("zzz")]]))).text();
    const first = (request: { body: unknown }) =>
      (request.body as { messages: Array<{ content: Array<{ text: string }> }> }).messages[0]!.content[0]!
        .text[0];
    const { requests, rebuilds } = cacheStability(double.requests, {
      conversationOf: (request) => (first(request) === "s" ? undefined : first(request)),
    });
    expect(requests.map((entry) => [entry.index, entry.conversation])).toEqual([
      [0, "a"],
      [1, "b"],
      [3, "a"],
    ]);
    expect(rebuilds).toBe(0);
  });
});
