import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidScriptError, loadScriptFile, parseScript, startModelDouble } from "../src/index.js";

function messageFor(value: unknown): string {
  try {
    parseScript(value);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidScriptError);
    return (error as Error).message;
  }
  throw new Error("script was accepted");
}

describe("script validation", () => {
  it("accepts a script using every response kind", () => {
    const script = parseScript({
      steps: [
        {
          match: { lastUserTextIncludes: "[go]", api: "anthropic" },
          response: {
            events: [
              { type: "thinking", thinking: "t", signature: "s" },
              { type: "delay", ms: 5 },
              { type: "text", text: "x", chunks: 2 },
              { type: "tool_use", id: "toolu_1", nameFrom: { endsWith: "__bash" }, input: { a: 1 } },
              { type: "stall", ms: 1 },
              { type: "drop" },
            ],
            stopReason: "tool_use",
            usage: { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 3 },
          },
        },
        { repeat: true, response: { error: { status: 529, message: "busy", retryAfter: 1 } } },
      ],
    });
    expect(script.steps).toHaveLength(2);
  });

  it.each([
    [{ steps: [{ response: { events: [{ type: "txt", text: "x" }] } }] }, "steps[0].response.events[0].type"],
    [{ steps: [{ response: { events: [{ type: "text" }] } }] }, "steps[0].response.events[0].text"],
    [{ steps: [{ response: {} }] }, "steps[0].response.events: give exactly one of events or error"],
    [
      { steps: [{ response: { events: [{ type: "tool_use", input: {} }] } }] },
      "steps[0].response.events[0].name: give exactly one of name or nameFrom",
    ],
    [{ steps: [{ repeats: true, response: { events: [] } }] }, "steps[0].repeats: is not allowed"],
    [{ steps: [{ match: { toolResultFor: 5 }, response: { events: [] } }] }, "steps[0].match"],
    [{ steps: [{ match: {}, response: { events: [] } }] }, "steps[0].match"],
    [{ steps: [{ response: { error: { status: 200, message: "x" } } }] }, "steps[0].response.error.status"],
    [{ steps: [{ response: { events: [{ type: "delay", ms: -1 }] } }] }, "steps[0].response.events[0].ms"],
    [{}, "steps"],
  ])("names the offending field (%#)", (value, expected) => {
    expect(messageFor(value)).toContain(expected);
  });

  it("accepts the example script in the README", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const example = /```json\n([\s\S]*?)\n```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    expect(parseScript(JSON.parse(example!)).steps).toHaveLength(4);
  });

  it("makes startModelDouble refuse an invalid script", async () => {
    await expect(
      startModelDouble({ steps: [{ response: { events: [{ type: "nope" }] } }] } as never),
    ).rejects.toThrow("steps[0].response.events[0].type");
  });
});

describe("loadScriptFile", () => {
  let directory: string | undefined;
  afterEach(async () => {
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it("loads a JSON script and names the file and field when it is invalid", async () => {
    directory = await mkdtemp(join(tmpdir(), "model-double-script-"));
    const good = join(directory, "good.json");
    const bad = join(directory, "bad.json");
    const notJson = join(directory, "not.json");
    await writeFile(
      good,
      JSON.stringify({ steps: [{ response: { events: [{ type: "text", text: "hi" }] } }] }),
    );
    await writeFile(bad, JSON.stringify({ steps: [{ response: { events: [{ type: "text", text: 1 }] } }] }));
    await writeFile(notJson, "{");

    expect((await loadScriptFile(good)).steps).toHaveLength(1);
    await expect(loadScriptFile(bad)).rejects.toThrow(
      `script ${bad}: invalid script: steps[0].response.events[0].text`,
    );
    await expect(loadScriptFile(notJson)).rejects.toThrow(`script ${notJson} is not JSON`);
    await expect(loadScriptFile(join(directory, "missing.json"))).rejects.toThrow("cannot read script");
  });
});
