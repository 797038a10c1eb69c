import { rmSync } from "node:fs";
import { join } from "node:path";
import { lastUserText, offeredTools, textReply } from "@bridgeworks/model-double";
import { waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, inject, test } from "vitest";
import { WARM_UP_PROMPT } from "../src/warm-up.js";
import {
  claudeProcessesOf,
  lastAssistant,
  modelRequests,
  type PiProcess,
  piLines,
  textOf,
} from "./support/pi-driver.js";
import { Scenario } from "./support/scenario.js";

let scenario: Scenario | undefined;
afterEach(async () => {
  await scenario?.dispose();
  scenario = undefined;
});

/** Waits (bounded) until the Claude Code processes in Pi's group satisfy `done`; returns them. */
async function claudeWhen(pi: PiProcess, done: (pids: number[]) => boolean, what: string): Promise<number[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const pids = claudeProcessesOf(pi);
    if (done(pids)) return pids;
    if (Date.now() > deadline) throw new Error(`${what}: Claude Code processes are ${JSON.stringify(pids)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function queryStarts(current: Scenario) {
  return current.diag().filter((record) => record.type === "claude_query_started");
}

function warmUps(current: Scenario) {
  return current.diag().filter((record) => record.type === "claude_warm_up");
}

/** Every user message the double was sent, as text: a warm-up must never be among them. */
function userTexts(current: Scenario): string[] {
  return modelRequests(current.double).flatMap((request) =>
    (request.body as { messages: { role: string; content: unknown }[] }).messages
      .filter((message) => message.role === "user")
      .map((message) => JSON.stringify(message.content)),
  );
}

describe.each(piLines(inject("node24")))("$name: Claude Code started ahead of the first prompt", (line) => {
  test("Pi started on a claude-code model: Claude Code runs before any prompt, asks the model nothing, and answers the first prompt", async () => {
    scenario = await Scenario.start({
      steps: [
        {
          // The conversation's request offers Pi's tools; Claude Code's side requests (a title, …) do not.
          match: (request) =>
            offeredTools(request.body).length > 0 &&
            lastUserText("anthropic", request.body).includes("[first]"),
          response: { events: [{ type: "text", text: "FIRST ANSWER" }] },
        },
        { repeat: true, response: { events: [{ type: "text", text: "side answer" }] } },
      ],
    });
    // Claude Code's own background traffic on too: nothing may reach the model before a prompt.
    const pi = scenario.pi(line, { env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "" } });
    expect((await pi.call({ type: "get_state" })).success).toBe(true);
    const [warm] = await claudeWhen(pi, (pids) => pids.length === 1, "a Claude Code ahead of the prompt");
    await waitUntil(() => warmUps(scenario!).length > 0, 30_000, "the warm-up's end");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // Nothing that costs tokens (Claude Code's start-up connectivity probe, HEAD /api/hello, may come).
    expect(
      scenario.double.requests
        .filter((request) => request.path.startsWith("/v1/"))
        .map((request) => request.path),
    ).toEqual([]);
    // Claude Code ran its prompt path once on a prompt its own hook blocked (sent to no model).
    expect(warmUps(scenario)).toEqual([expect.objectContaining({ outcome: "blocked" })]);

    const events = await scenario.turn(pi, "[first] hello");
    expect(textOf(lastAssistant(events))).toBe("FIRST ANSWER");
    // The same process answered: one query, started warm.
    expect(claudeProcessesOf(pi)).toEqual([warm]);
    expect(queryStarts(scenario)).toEqual([
      expect.objectContaining({ resumed: false, warm: true, replayedMessages: 0 }),
    ]);
    expect(
      modelRequests(scenario.double).filter((request) => offeredTools(request.body).length > 0),
    ).toHaveLength(1);
    expect(userTexts(scenario).filter((text) => text.includes(WARM_UP_PROMPT))).toEqual([]);
    scenario.expectQuiescent();
  });

  test("moving to another provider ends Claude Code; coming back starts it again on the same Claude session", async () => {
    scenario = await Scenario.start({
      steps: [textReply("[one]", "ONE"), textReply("[native]", "NATIVE"), textReply("[back]", "BACK")],
    });
    const pi = scenario.pi(line);
    await scenario.turn(pi, "[one] first");
    const away = await pi.call({ type: "set_model", provider: "double", modelId: "claude-sonnet-4-5" });
    expect(away.success, JSON.stringify(away)).toBe(true);
    await claudeWhen(pi, (pids) => pids.length === 0, "no Claude Code once Pi left claude-code");
    expect(textOf(lastAssistant(await scenario.turn(pi, "[native] second")))).toBe("NATIVE");
    expect(claudeProcessesOf(pi)).toEqual([]);

    const back = await pi.call({ type: "set_model", provider: "claude-code", modelId: "sonnet" });
    expect(back.success, JSON.stringify(back)).toBe(true);
    await claudeWhen(pi, (pids) => pids.length === 1, "Claude Code again, before the prompt");
    expect(textOf(lastAssistant(await scenario.turn(pi, "[back] third")))).toBe("BACK");
    const starts = queryStarts(scenario);
    expect(starts.at(-1)).toMatchObject({ resumed: true, warm: true });
    // Claude's conversation went on: its first turn is in the last request once, the other
    // provider's turn was told to it.
    const last = JSON.stringify(modelRequests(scenario.double).at(-1)!.body);
    expect(last.split("[one] first")).toHaveLength(2);
    expect(last).toContain("NATIVE");
    expect(userTexts(scenario).filter((text) => text.includes(WARM_UP_PROMPT))).toEqual([]);
    scenario.expectQuiescent();
  });

  test("a new session (RPC new_session) ends the old session's Claude Code; the new one's was started as Pi replaced the old", async () => {
    scenario = await Scenario.start({ steps: [textReply("[old]", "OLD"), textReply("[new]", "NEW")] });
    const pi = scenario.pi(line);
    await scenario.turn(pi, "[old] first");
    const [old] = claudeProcessesOf(pi);
    expect(old).toBeDefined();
    expect((await pi.call({ type: "new_session" })).success).toBe(true);
    const [fresh] = await claudeWhen(
      pi,
      (pids) => pids.length === 1 && pids[0] !== old,
      "only the new session's Claude Code",
    );
    const events = await scenario.turn(pi, "[new] hello");
    expect(textOf(lastAssistant(events))).toBe("NEW");
    expect(claudeProcessesOf(pi)).toEqual([fresh]);
    const sessions = new Set(queryStarts(scenario).map((record) => record.sessionId));
    expect(sessions.size).toBe(2);
    // Started by the old session as Pi replaced it, before the new session (and its instance) existed.
    expect(queryStarts(scenario).at(-1)).toMatchObject({ warm: true, resumed: false, successor: true });
    // The new session's request carries nothing of the old one, nor of the warm-ups.
    expect(JSON.stringify(modelRequests(scenario.double).at(-1)!.body)).not.toContain("[old] first");
    expect(userTexts(scenario).filter((text) => text.includes(WARM_UP_PROMPT))).toEqual([]);
    scenario.expectQuiescent();
  });

  test("pi --continue on a Claude session Claude Code no longer has: one retry, then a new Claude session told the history", async () => {
    scenario = await Scenario.start({ steps: [textReply("[one]", "ONE"), textReply("[two]", "TWO")] });
    const first = scenario.pi(line, { persistSession: true });
    expect(textOf(lastAssistant(await scenario.turn(first, "[one] first")))).toBe("ONE");
    expect(await scenario.endPi(first)).toEqual([]);
    // Claude Code's transcripts are gone (deleted, or cleaned up after their retention period).
    rmSync(join(scenario.environment.claudeConfigDir, "projects"), { recursive: true, force: true });

    const again = scenario.pi(line, { persistSession: true, extraArgs: ["--continue"] });
    const from = again.events().length;
    again.prompt("[two] second");
    await again.waitFor(
      () => {
        const run = again.events().slice(from);
        const answered = run.findIndex(
          (event) =>
            event.type === "message_end" && textOf(event.message as Record<string, unknown>) === "TWO",
        );
        return answered >= 0 && run.slice(answered).some((event) => event.type === "agent_end");
      },
      90_000,
      from,
    );
    const retries = again.events().filter((event) => event.type === "auto_retry_start");
    expect(retries).toEqual([
      expect.objectContaining({
        errorMessage: expect.stringContaining("No conversation found with session ID"),
      }),
    ]);
    // The new session was told Pi's history: the first turn, once, as a transcript.
    const told = JSON.stringify(modelRequests(scenario.double).at(-1)!.body);
    expect(told.split("[one] first")).toHaveLength(2);
    expect(told).toContain("<conversation_so_far>");
    expect(queryStarts(scenario).at(-1)).toMatchObject({ resumed: false });
    scenario.expectQuiescent();
  });

  test("one-shot -p: answered, and no Claude Code outlives Pi", async () => {
    scenario = await Scenario.start({ steps: [textReply("[once]", "ONCE")] });
    const pi = scenario.pi(line, { mode: "json", prompt: "[once] hi" });
    const exit = await pi.process.exited;
    expect(exit.code, pi.process.stderr()).toBe(0);
    expect(textOf(lastAssistant(pi.events()))).toBe("ONCE");
    expect(await scenario.endPi(pi)).toEqual([]);
    scenario.expectQuiescent();
  });
});
