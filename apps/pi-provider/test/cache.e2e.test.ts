import type { CachePrefixEntry, RecordedRequest, ScriptInput } from "@bridgeworks/model-double";
import { textReply } from "@bridgeworks/model-double";
import type { RebuildReason } from "@bridgeworks/protocol";
import { afterEach, describe, expect, inject, test } from "vitest";
import {
  cacheRow,
  conversationCache,
  explainRebuilds,
  receiptRebuilds,
  reportCacheRow,
} from "./support/cache-check.js";
import { lastAssistant, type PiLine, type PiProcess, piLines, textOf } from "./support/pi-driver.js";
import { compactionScript, Scenario } from "./support/scenario.js";

let scenario: Scenario | undefined;
afterEach(async () => {
  await scenario?.dispose();
  scenario = undefined;
});

const bash = { endsWith: "__bash" };

/** A prompt answered by one Bash call (`sleep` seconds long), then `answer` once its result is back. */
function toolRound(tag: string, answer: string, sleep = 0): ScriptInput["steps"] {
  const id = `toolu_${tag.replace(/\W/g, "")}`;
  return [
    {
      match: { lastUserTextIncludes: `[${tag}]` },
      response: {
        events: [
          { type: "tool_use", id, nameFrom: bash, input: { command: `sleep ${sleep}; printf ${tag}` } },
        ],
      },
    },
    { match: { toolResultFor: id }, response: { events: [{ type: "text", text: answer }] } },
  ];
}

/**
 * The scenario's prompt-cache stability: every rebuild must be one `forced` allows (none by default);
 * the row goes to the report, and no Claude Code may outlive any of its Pi sessions.
 */
async function expectCacheStable(
  line: PiLine,
  name: string,
  forced: { count: number; allows: (entry: CachePrefixEntry, request: RecordedRequest) => boolean } = {
    count: 0,
    allows: () => false,
  },
): Promise<void> {
  const current = scenario!;
  const stability = conversationCache(current.double);
  reportCacheRow(cacheRow(line.name, name, forced.count, stability, receiptRebuilds(current.diag())));
  const requests = new Map(current.double.requests.map((request) => [request.index, request]));
  const unforced = stability.requests.filter(
    (entry) => entry.rebuild && !forced.allows(entry, requests.get(entry.index)!),
  );
  expect(unforced, explainRebuilds(current.double, stability)).toEqual([]);
  expect(stability.rebuilds).toBeLessThanOrEqual(forced.count);
  expect(stability.requests.length).toBeGreaterThan(1);
  current.expectQuiescent();
}

/**
 * Each run's receipt (diagnostics log and Pi's session) names the scenario's rebuilds by reason, none
 * where it forces none, and `/claude-code doctor` in `pi` counts them the same.
 */
async function expectRebuildReasons(pi: PiProcess, reasons: RebuildReason[]): Promise<void> {
  const records = scenario!.diag();
  expect(records.some((record) => record.type === "claude_turn_receipt")).toBe(true);
  expect(receiptRebuilds(records)).toEqual(reasons);
  const counts = new Map<string, number>();
  for (const reason of reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  const expected = counts.size === 0 ? "none" : [...counts].map(([reason, n]) => `${reason} ${n}`).join(", ");
  expect((await pi.doctor()).split("\n")).toContain(`Cache rebuilds: ${expected}`);
}

async function turnsAnswered(pi: PiProcess, prompts: Array<[string, string]>): Promise<void> {
  for (const [prompt, answer] of prompts) {
    const events = await scenario!.turn(pi, prompt);
    expect(textOf(lastAssistant(events))).toBe(answer);
  }
}

describe.each(piLines(inject("node24")))("$name: prompt-cache stability", (line) => {
  test("plain turns", async () => {
    scenario = await Scenario.start({
      steps: [textReply("[one]", "ONE"), textReply("[two]", "TWO"), textReply("[three]", "THREE")],
    });
    const pi = scenario.pi(line);
    await turnsAnswered(pi, [
      ["[one] first", "ONE"],
      ["[two] second", "TWO"],
      ["[three] third", "THREE"],
    ]);
    await expectCacheStable(line, "plain turns");
    await expectRebuildReasons(pi, []);
  });

  test("tool rounds", async () => {
    scenario = await Scenario.start({
      steps: [...toolRound("tool-a", "A DONE"), ...toolRound("tool-b", "B DONE")],
    });
    const pi = scenario.pi(line);
    await turnsAnswered(pi, [
      ["[tool-a] run", "A DONE"],
      ["[tool-b] run", "B DONE"],
    ]);
    await expectCacheStable(line, "tool rounds");
    await expectRebuildReasons(pi, []);
  });

  test("abort then continue", async () => {
    scenario = await Scenario.start({
      steps: [
        textReply("[one]", "ONE"),
        {
          match: { lastUserTextIncludes: "[cut]" },
          response: { events: [{ type: "text", text: "cut short" }, { type: "stall" }] },
        },
        textReply("[three]", "THREE"),
        textReply("[four]", "FOUR"),
      ],
    });
    const pi = scenario.pi(line);
    await turnsAnswered(pi, [["[one] first", "ONE"]]);
    await pi.abortWhileStreaming("[cut] talk");
    await turnsAnswered(pi, [
      ["[three] third", "THREE"],
      ["[four] fourth", "FOUR"],
    ]);
    await expectCacheStable(line, "abort then continue");
    await expectRebuildReasons(pi, []);
  });

  test("steer mid-round", async () => {
    scenario = await Scenario.start({
      steps: [...toolRound("steer", "STEERED", 2), textReply("[after]", "AFTER")],
    });
    const pi = scenario.pi(line);
    const from = pi.events().length;
    pi.prompt("[steer] run the slow one");
    await pi.waitFor((event) => event.type === "tool_execution_start", 60_000, from);
    expect((await pi.call({ type: "steer", message: "STEER: also mind the tests" })).success).toBe(true);
    await pi.waitForAgentEnd(from);
    await turnsAnswered(pi, [["[after] next", "AFTER"]]);
    await expectCacheStable(line, "steer mid-round");
    await expectRebuildReasons(pi, []);
  });

  test("follow-up", async () => {
    scenario = await Scenario.start({
      steps: [...toolRound("follow", "ROUND DONE", 2), textReply("FOLLOW:", "FOLLOWED UP")],
    });
    const pi = scenario.pi(line);
    const from = pi.events().length;
    pi.prompt("[follow] run the slow one");
    await pi.waitFor((event) => event.type === "tool_execution_start", 60_000, from);
    expect((await pi.call({ type: "follow_up", message: "FOLLOW: then summarize" })).success).toBe(true);
    await pi.waitForAgentEnd(from);
    expect(textOf(lastAssistant(pi.events().slice(from)))).toBe("FOLLOWED UP");
    await expectCacheStable(line, "follow-up");
    await expectRebuildReasons(pi, []);
  });

  test("error then retry", async () => {
    scenario = await Scenario.start({
      steps: [
        textReply("[one]", "ONE"),
        {
          match: { lastUserTextIncludes: "[two]" },
          response: { error: { status: 529, message: "overloaded" } },
        },
        textReply("[two]", "TWO"),
        textReply("[three]", "THREE"),
      ],
    });
    const pi = scenario.pi(line);
    await turnsAnswered(pi, [["[one] first", "ONE"]]);
    const from = pi.events().length;
    pi.prompt("[two] second");
    // Pi retries after the failed run's agent_end: wait for the end of the run that answered.
    await pi.waitFor(
      () => {
        const run = pi.events().slice(from);
        const answered = run.findIndex(
          (event) =>
            event.type === "message_end" && textOf(event.message as Record<string, unknown>) === "TWO",
        );
        return answered >= 0 && run.slice(answered).some((event) => event.type === "agent_end");
      },
      60_000,
      from,
    );
    expect(
      pi
        .events()
        .slice(from)
        .some((event) => event.type === "auto_retry_start"),
    ).toBe(true);
    await turnsAnswered(pi, [["[three] third", "THREE"]]);
    await expectCacheStable(line, "error then retry");
    await expectRebuildReasons(pi, []);
  });

  test("model switch and back", async () => {
    scenario = await Scenario.start({
      steps: [textReply("[one]", "ONE"), textReply("[two]", "TWO"), textReply("[three]", "THREE")],
    });
    const pi = scenario.pi(line);
    await turnsAnswered(pi, [["[one] first", "ONE"]]);
    expect((await pi.call({ type: "set_model", provider: "claude-code", modelId: "opus" })).success).toBe(
      true,
    );
    await turnsAnswered(pi, [["[two] second", "TWO"]]);
    expect((await pi.call({ type: "set_model", provider: "claude-code", modelId: "sonnet" })).success).toBe(
      true,
    );
    await turnsAnswered(pi, [["[three] third", "THREE"]]);
    // A request for another model reads another model's cache: the two switches may each rebuild.
    const modelOf = (request: RecordedRequest) => (request.body as { model?: string }).model;
    const conversation = conversationCache(scenario.double).requests.map(
      (entry) => scenario!.double.requests[entry.index]!,
    );
    await expectCacheStable(line, "model switch and back", {
      count: 2,
      allows: (_entry, request) => {
        const position = conversation.indexOf(request);
        return position > 0 && modelOf(conversation[position - 1]!) !== modelOf(request);
      },
    });
    await expectRebuildReasons(pi, ["model_switch", "model_switch"]);
  });

  test("Pi compaction", async () => {
    scenario = await Scenario.start(compactionScript());
    scenario.keepAlmostNothingAtCompaction();
    const pi = scenario.pi(line);
    await turnsAnswered(pi, [
      ["[one] first question", "ONE ANSWER"],
      ["[two] second question", "TWO ANSWER"],
    ]);
    expect((await pi.call({ type: "compact" }, 90_000)).success).toBe(true);
    await turnsAnswered(pi, [
      ["[three] third question", "THREE ANSWER"],
      ["[four] fourth question", "FOUR ANSWER"],
    ]);
    // Compaction rewrites the history: the first request after it may rebuild, nothing after it.
    const firstAfter = scenario.double.requests.find((request) =>
      JSON.stringify(request.body).includes("[three] third question"),
    );
    await expectCacheStable(line, "Pi compaction", {
      count: 1,
      allows: (_entry, request) => request === firstAfter,
    });
    await expectRebuildReasons(pi, ["compaction"]);
  });

  test("Pi restart with --continue", async () => {
    scenario = await Scenario.start({
      steps: [textReply("[one]", "ONE"), textReply("[two]", "TWO"), textReply("[three]", "THREE")],
    });
    const first = scenario.pi(line, { persistSession: true });
    await turnsAnswered(first, [
      ["[one] first", "ONE"],
      ["[two] second", "TWO"],
    ]);
    expect(await scenario.endPi(first)).toEqual([]);
    const again = scenario.pi(line, { persistSession: true, extraArgs: ["--continue"] });
    await turnsAnswered(again, [["[three] third", "THREE"]]);
    await expectCacheStable(line, "Pi restart with --continue");
    await expectRebuildReasons(again, []);
  });
});
