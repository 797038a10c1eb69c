import { type RecordedRequest, type ScriptInput, textReply, toolTurnScript } from "@bridgeworks/model-double";
import { afterEach, describe, expect, inject, test } from "vitest";
import { KEEP_WARM_QUESTION } from "../src/keep-warm.js";
import { lastAssistant, modelRequests, piLines, textOf, toolExecutions } from "./support/pi-driver.js";
import { Scenario } from "./support/scenario.js";

let scenario: Scenario | undefined;
afterEach(async () => {
  await scenario?.dispose();
  scenario = undefined;
});

/** The double's cache lifetime, and a Pi tool that outlasts it by far. */
const CACHE_TTL_MS = 4_000;
const TOOL_SECONDS = 9;

/**
 * A prompt answered by one long Bash call, then by `AFTER`; side questions (the keep-warm requests,
 * which carry a placeholder result for the call in progress) are answered `ok` by the first step,
 * which claims them before the step matching that result.
 */
function longToolScript(): ScriptInput {
  const turn = toolTurnScript(
    [
      {
        id: "toolu_long",
        nameFrom: { endsWith: "__bash" },
        input: { command: `sleep ${TOOL_SECONDS}; printf SLEPT` },
      },
    ],
    "AFTER",
  );
  return {
    promptCache: { ttlMs: CACHE_TTL_MS },
    steps: [textReply(KEEP_WARM_QUESTION, "ok", { repeat: true }), ...turn.steps],
  };
}

/** The steps: 0 answers side questions, 1 the tool's result, 2 the prompt (with the tool call). */
const AFTER_STEP = 1;

/** Of the request after the tool, the share of its cacheable prefix read from the cache. */
function cacheReadShare(request: RecordedRequest): number {
  const usage = request.response.usage!;
  return usage.cache_read_input_tokens / (usage.cache_read_input_tokens + usage.cache_creation_input_tokens);
}

async function runLongTool(line: ReturnType<typeof piLines>[number], keepWarm: string) {
  scenario = await Scenario.start(longToolScript());
  const pi = scenario.pi(line, {
    env: { CLAUDE_BRIDGE_KEEP_WARM: keepWarm, CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT: "2s" },
  });
  const run = await scenario.turn(pi, "[long] run the long one");
  expect(toolExecutions(run)).toHaveLength(1);
  expect(textOf(lastAssistant(run))).toBe("AFTER");
  const requests = modelRequests(scenario.double);
  const after = requests.find((request) => request.response.stepIndex === AFTER_STEP)!;
  const sideQuestions = requests.filter((request) => request.response.stepIndex === 0);
  // The side questions are no part of the conversation: neither the model's turns nor Pi's see them.
  for (const request of requests.filter((other) => other.response.stepIndex !== 0))
    expect(JSON.stringify(request.body)).not.toContain(KEEP_WARM_QUESTION);
  expect(JSON.stringify(pi.events())).not.toContain(KEEP_WARM_QUESTION);
  expect(scenario.diag().filter((record) => record.type === "stream_idle_timeout")).toEqual([]);
  scenario.expectQuiescent();
  return { after, sideQuestions, diag: scenario.diag() };
}

describe.each(piLines(inject("node24")))("$name: the prompt cache through a long tool", (line) => {
  test("without keep-warm, the request after a tool that outlived the cache writes the whole prefix again", async () => {
    const { after, sideQuestions } = await runLongTool(line, "0");
    expect(sideQuestions).toEqual([]);
    expect(cacheReadShare(after)).toBeLessThan(0.9);
  });

  test("with keep-warm, side questions while the tool runs keep the prefix cached: the request after it reads at least 90% of it", async () => {
    const { after, sideQuestions, diag } = await runLongTool(line, "1s");
    expect(sideQuestions.length).toBeGreaterThan(0);
    expect(cacheReadShare(after)).toBeGreaterThanOrEqual(0.9);
    const sent = diag.filter((record) => record.type === "claude_keep_warm" && record.outcome === "sent");
    expect(sent.length).toBe(sideQuestions.length);
    const receipts = diag.filter((record) => record.type === "claude_turn_receipt");
    expect(receipts).toEqual([
      expect.objectContaining({
        receipt: expect.objectContaining({ keepWarmRequests: sideQuestions.length }),
      }),
    ]);
  });
});
