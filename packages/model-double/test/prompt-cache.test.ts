import { describe, expect, it } from "vitest";
import { parseScript, promptPrefixUnits } from "../src/index.js";
import { postJson, useDoubles } from "./helpers.js";

const start = useDoubles();
const cached = { type: "ephemeral" };
const system = [{ type: "text", text: "S".repeat(4000), cache_control: cached }];

/** A conversation of `turns` text messages (user first), the last one a cache breakpoint. */
function body(turns: string[]) {
  return {
    model: "claude-test-model",
    max_tokens: 1024,
    stream: true,
    system,
    messages: turns.map((text, position) => ({
      role: position % 2 === 0 ? "user" : "assistant",
      content: [{ type: "text", text, ...(position === turns.length - 1 ? { cache_control: cached } : {}) }],
    })),
  };
}

/** Tokens of the prefix units of `body` (the double's estimate: a quarter of the characters each). */
function tokensOf(request: unknown): number {
  return promptPrefixUnits(request).reduce(
    (sum, unit) => sum + Math.max(1, Math.ceil(unit.key.length / 4)),
    0,
  );
}

describe("promptCache: a prompt cache with a lifetime", () => {
  it("reads the longest live cached prefix, writes up to the last breakpoint, and forgets what outlived ttlMs", async () => {
    let now = 0;
    const double = await start(
      {
        promptCache: { ttlMs: 1000 },
        steps: [{ repeat: true, response: { events: [{ type: "text", text: "ok" }] } }],
      },
      { now: () => now },
    );
    const send = async (turns: string[], at: number) => {
      now = at;
      await (await postJson(`${double.url}/v1/messages`, body(turns))).text();
      return double.requests.at(-1)!.response.usage!;
    };
    const first = await send(["one"], 0);
    expect(first).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: tokensOf(body(["one"])),
    });
    // 900 ms later: the first request's whole prefix is read, only the new turns are written.
    const second = await send(["one", "answer", "two"], 900);
    expect(second.cache_read_input_tokens).toBe(tokensOf(body(["one"])));
    expect(second.cache_read_input_tokens + second.cache_creation_input_tokens).toBe(
      tokensOf(body(["one", "answer", "two"])),
    );
    // Reading refreshed the entry, so 1.8 s after the start (0.9 s after the read) it still lives.
    expect((await send(["one", "answer", "other"], 1_800)).cache_read_input_tokens).toBe(
      tokensOf(body(["one"])),
    );
    // Nothing was used for longer than 1 s: a full rebuild.
    const late = await send(["one", "answer", "two", "answer", "three"], 2_900);
    expect(late.cache_read_input_tokens).toBe(0);
    expect(late.cache_creation_input_tokens).toBe(
      tokensOf(body(["one", "answer", "two", "answer", "three"])),
    );
  });

  it("a step's own usage wins over the model, and scripts without promptCache report no cache use", async () => {
    const scripted = await start({
      promptCache: { ttlMs: 60_000 },
      steps: [
        {
          repeat: true,
          response: {
            events: [{ type: "text", text: "ok" }],
            usage: { input_tokens: 7, output_tokens: 1, cache_read_input_tokens: 3 },
          },
        },
      ],
    });
    const plain = await start({
      steps: [{ repeat: true, response: { events: [{ type: "text", text: "ok" }] } }],
    });
    for (const double of [scripted, plain]) {
      for (let i = 0; i < 2; i++) await (await postJson(`${double.url}/v1/messages`, body(["one"]))).text();
    }
    expect(scripted.requests.map((request) => request.response.usage?.cache_read_input_tokens)).toEqual([
      3, 3,
    ]);
    expect(plain.requests.map((request) => request.response.usage?.cache_read_input_tokens)).toEqual([0, 0]);
  });

  it("refuses a lifetime that is not a positive whole number of milliseconds, naming the field", () => {
    expect(() => parseScript({ promptCache: { ttlMs: 0 }, steps: [] })).toThrow(/promptCache\.ttlMs/);
  });
});
