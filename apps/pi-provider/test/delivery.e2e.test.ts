import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { textReply } from "@bridgeworks/model-double";
import { afterEach, describe, expect, inject, test } from "vitest";
import {
  blocksOf,
  conversationOf,
  lastAssistant,
  messagesOf,
  modelRequests,
  type PiEvent,
  type PiProcess,
  piLines,
  textOf,
  toolExecutions,
  toolResultBlock,
  toolResultText,
} from "./support/pi-driver.js";
import { Scenario } from "./support/scenario.js";

let scenario: Scenario | undefined;
afterEach(async () => {
  await scenario?.dispose();
  scenario = undefined;
});

const bash = { endsWith: "__bash" };
const read = { endsWith: "__read" };

function executedIds(events: readonly PiEvent[]): string[] {
  return toolExecutions(events).map((event) => String(event.toolCallId));
}

/** The conversation messages Pi committed in a run (`message_end`), without Pi 1.x's system messages. */
function committed(events: readonly PiEvent[]): Array<{ role: string; text: string }> {
  return events
    .filter((event) => event.type === "message_end")
    .map((event) => event.message as Record<string, unknown> & { role: string })
    .filter((message) => message.role !== "system")
    .map((message) => ({ role: message.role, text: textOf(message) }));
}

function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

/** Starts a prompt whose model answer is a slow Bash call, and sends `command` while the call runs. */
async function duringToolRound(
  pi: PiProcess,
  prompt: string,
  command: { type: "steer" | "follow_up"; message: string },
): Promise<PiEvent[]> {
  const from = pi.events().length;
  pi.prompt(prompt);
  await pi.waitFor((event) => event.type === "tool_execution_start", 60_000, from);
  const response = await pi.call(command);
  expect(response.success, JSON.stringify(response)).toBe(true);
  // Still mid-round: Pi queued the message, it did not wait for the tool to end.
  expect(
    pi
      .events()
      .slice(from)
      .some((event) => event.type === "tool_execution_end"),
  ).toBe(false);
  await pi.waitForAgentEnd(from);
  return pi.events().slice(from);
}

describe.each(piLines(inject("node24")))("$name: tool-call delivery", (line) => {
  test("the seed's live repro: two separate Bash calls, the second outlasting a 5s idle timeout", async () => {
    scenario = await Scenario.start({
      steps: [
        {
          // As in the seed: one message asks for both calls; Claude Code invokes the first handler
          // before the second block is complete, and the second call outlasts the idle timeout.
          match: { lastUserTextIncludes: "DEFER_REPRO" },
          response: {
            events: [
              {
                type: "tool_use",
                id: "toolu_repro_a",
                nameFrom: bash,
                input: { command: "sleep 1; printf 'DEFER_REPRO_A\\n'" },
              },
              {
                type: "tool_use",
                id: "toolu_repro_b",
                nameFrom: bash,
                input: { command: "sleep 8; printf 'DEFER_REPRO_B\\n'" },
              },
            ],
          },
        },
        {
          match: { toolResultFor: "toolu_repro_b" },
          response: { events: [{ type: "text", text: "DEFER_REPRO_A\nDEFER_REPRO_B" }] },
        },
      ],
    });
    const pi = scenario.pi(line, {
      mode: "json",
      prompt: "Run two separate Bash calls (DEFER_REPRO)",
      env: { CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT: "5s" },
    });
    const exit = await pi.process.exited;
    const events = pi.events();
    expect(exit.code, pi.process.stderr()).toBe(0);

    const outputs = toolExecutions(events).map((event) =>
      ((event.result as { content: Array<{ text?: string }> }).content ?? [])
        .map((part) => part.text ?? "")
        .join(""),
    );
    expect(outputs.join("")).toBe("DEFER_REPRO_A\nDEFER_REPRO_B\n");
    expect(textOf(lastAssistant(events))).toBe("DEFER_REPRO_A\nDEFER_REPRO_B");
    const last = scenario.double.requests.at(-1)!;
    expect(toolResultText(last.body, "toolu_repro_a")?.trim()).toBe("DEFER_REPRO_A");
    expect(toolResultText(last.body, "toolu_repro_b")?.trim()).toBe("DEFER_REPRO_B");
    expect(scenario.diag().filter((record) => record.type === "stream_idle_timeout")).toEqual([]);
    expect(events.some((event) => event.type === "auto_retry_start")).toBe(false);
    scenario.expectQuiescent();
  });

  test.each([
    {
      dispatch: "serial (bash, no readOnlyHint)",
      concurrent: false,
      tool: bash,
      inputs: [{ command: "printf FIRST" }, { command: "printf SECOND" }],
      expected: ["FIRST", "SECOND"],
    },
    {
      dispatch: "concurrent (read, readOnlyHint)",
      concurrent: true,
      tool: read,
      inputs: [{ path: "first.txt" }, { path: "second.txt" }],
      expected: ["FIRST", "SECOND"],
    },
  ])(
    "text plus two tool_use blocks in one message, $dispatch",
    async ({ tool, inputs, expected, concurrent }) => {
      scenario = await Scenario.start({
        steps: [
          {
            match: { lastUserTextIncludes: "[two]" },
            response: {
              events: [
                { type: "text", text: "Running both." },
                { type: "tool_use", id: "toolu_two_1", nameFrom: tool, input: inputs[0]! },
                { type: "tool_use", id: "toolu_two_2", nameFrom: tool, input: inputs[1]! },
              ],
            },
          },
          {
            match: { toolResultFor: "toolu_two_2" },
            response: { events: [{ type: "text", text: "both done" }] },
          },
        ],
      });
      writeFileSync(join(scenario.environment.workspace, "first.txt"), "FIRST");
      writeFileSync(join(scenario.environment.workspace, "second.txt"), "SECOND");
      const pi = scenario.pi(line);
      const events = await scenario.turn(pi, "[two] run both");

      expect(executedIds(events).sort()).toEqual(["toolu_two_1", "toolu_two_2"]);
      const followUp = scenario.double.requests.find(
        (request) => toolResultText(request.body, "toolu_two_2") !== undefined,
      );
      expect(toolResultText(followUp?.body, "toolu_two_1")).toContain(expected[0]);
      expect(toolResultText(followUp?.body, "toolu_two_2")).toContain(expected[1]);
      expect(textOf(lastAssistant(events))).toBe("both done");
      // Claude Code's dispatch order, as the ledger saw it: with readOnlyHint the second handler waits
      // before Pi got the calls; without it, only after the first one was answered, so the second
      // result had to be queued by id until its handler came.
      const diag = scenario.diag();
      const at = (id: string, event: string) =>
        diag.findIndex((record) => record.toolCallId === id && record.event === event);
      if (concurrent) {
        expect(at("toolu_two_2", "handler_waiting")).toBeGreaterThanOrEqual(0);
        expect(at("toolu_two_2", "handler_waiting")).toBeLessThan(at("toolu_two_1", "forwarded"));
      } else {
        expect(at("toolu_two_2", "result_queued")).toBeGreaterThan(at("toolu_two_1", "forwarded"));
        expect(at("toolu_two_2", "handler_waiting")).toBe(-1);
      }
      scenario.expectQuiescent();
    },
  );

  test("three calls of the same tool, one with {} arguments: no cross-pairing", async () => {
    scenario = await Scenario.start({
      steps: [
        {
          match: { lastUserTextIncludes: "[three]" },
          response: {
            events: [
              { type: "tool_use", id: "toolu_same_1", nameFrom: bash, input: { command: "printf ONE" } },
              { type: "tool_use", id: "toolu_same_2", nameFrom: bash, input: {} },
              { type: "tool_use", id: "toolu_same_3", nameFrom: bash, input: { command: "printf THREE" } },
            ],
          },
        },
        {
          match: { toolResultFor: "toolu_same_3" },
          response: { events: [{ type: "text", text: "three done" }] },
        },
      ],
    });
    const pi = scenario.pi(line);
    const events = await scenario.turn(pi, "[three] go");

    expect(executedIds(events).sort()).toEqual(["toolu_same_1", "toolu_same_2", "toolu_same_3"]);
    const followUp = scenario.double.requests.find(
      (request) => toolResultText(request.body, "toolu_same_3") !== undefined,
    );
    expect(toolResultText(followUp?.body, "toolu_same_1")).toBe("ONE");
    expect(toolResultText(followUp?.body, "toolu_same_3")).toBe("THREE");
    expect(toolResultBlock(followUp?.body, "toolu_same_2")?.is_error).toBe(true);
    expect(toolResultText(followUp?.body, "toolu_same_2")).not.toMatch(/ONE|THREE/);
    scenario.expectQuiescent();
  });

  test("a second tool_use block streamed seconds after the first one's handler was invoked", async () => {
    scenario = await Scenario.start({
      steps: [
        {
          match: { lastUserTextIncludes: "[late]" },
          response: {
            events: [
              { type: "tool_use", id: "toolu_early", nameFrom: bash, input: { command: "printf EARLY" } },
              { type: "delay", ms: 3000 },
              { type: "tool_use", id: "toolu_late", nameFrom: bash, input: { command: "printf LATE" } },
            ],
          },
        },
        {
          match: { toolResultFor: "toolu_late" },
          response: { events: [{ type: "text", text: "late done" }] },
        },
      ],
    });
    const pi = scenario.pi(line);
    const events = await scenario.turn(pi, "[late] go");

    expect(executedIds(events).sort()).toEqual(["toolu_early", "toolu_late"]);
    const followUp = scenario.double.requests.find(
      (request) => toolResultText(request.body, "toolu_late") !== undefined,
    );
    expect(toolResultText(followUp?.body, "toolu_early")).toBe("EARLY");
    expect(toolResultText(followUp?.body, "toolu_late")).toBe("LATE");
    // Claude Code invoked the first handler before the second block existed: it waited, then both ran.
    expect(
      scenario
        .diag()
        .some((record) => record.toolCallId === "toolu_early" && record.event === "handler_waiting"),
    ).toBe(true);
    scenario.expectQuiescent();
  });

  test("a steering message sent while a Pi tool runs reaches Claude Code with that tool's result, in one request", async () => {
    const steer = "STEER_TEXT: also say which command ran";
    scenario = await Scenario.start({
      steps: [
        {
          match: { lastUserTextIncludes: "[steer]" },
          response: {
            events: [
              {
                type: "tool_use",
                id: "toolu_steer",
                nameFrom: bash,
                input: { command: "sleep 2; printf STEER_TOOL_DONE" },
              },
            ],
          },
        },
        {
          match: { toolResultFor: "toolu_steer" },
          response: { events: [{ type: "text", text: "STEERED: the command was printf" }] },
        },
      ],
    });
    const pi = scenario.pi(line);
    const run = await duringToolRound(pi, "[steer] run the slow command", { type: "steer", message: steer });

    // Pi ran the call once and put the steering message after its result, before the next answer.
    expect(executedIds(run)).toEqual(["toolu_steer"]);
    expect(committed(run)).toEqual([
      { role: "user", text: "[steer] run the slow command" },
      { role: "assistant", text: "" },
      { role: "toolResult", text: "STEER_TOOL_DONE" },
      { role: "user", text: steer },
      { role: "assistant", text: "STEERED: the command was printf" },
    ]);
    expect(lastAssistant(run)?.stopReason).toBe("stop");
    expect(run.filter((event) => event.type === "agent_end")).toHaveLength(1);

    // Claude Code asked the model once more, with the result under its tool_use id and the steering
    // text in the same user message (Claude Code's mid-turn form), each exactly once.
    const requests = modelRequests(scenario.double);
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(messagesOf(requests[0]!.body))).not.toContain("STEER_TEXT");
    const body = requests[1]!.body;
    const last = messagesOf(body).at(-1)!;
    expect(last.role).toBe("user");
    const blocks = last.content as Array<Record<string, unknown> & { type: string }>;
    expect(blocks[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_steer" });
    expect(toolResultText(body, "toolu_steer")).toBe("STEER_TOOL_DONE");
    expect(blocksOf(body).filter((block) => block.type === "tool_result")).toHaveLength(1);
    const steering = blocks.slice(1).filter((block) => block.type === "text");
    expect(steering.map((block) => String(block.text)).join("\n")).toContain(steer);
    expect(count(JSON.stringify(messagesOf(body)), "STEER_TEXT")).toBe(1);

    // The same query answered it: no restart, no reply that found no Pi stream open.
    const diag = scenario.diag();
    expect(diag.filter((record) => record.type === "claude_query_started")).toHaveLength(1);
    expect(diag.filter((record) => record.type === "content_without_pi_stream")).toEqual([]);
    scenario.expectQuiescent();
  });

  test("a follow-up sent while a Pi tool runs waits for the answer, then is the next turn of the same Claude session", async () => {
    const followUp = "FOLLOW_TEXT: and now summarize";
    scenario = await Scenario.start({
      steps: [
        {
          match: { lastUserTextIncludes: "[follow]" },
          response: {
            events: [
              {
                type: "tool_use",
                id: "toolu_follow",
                nameFrom: bash,
                input: { command: "sleep 2; printf FOLLOW_TOOL_DONE" },
              },
            ],
          },
        },
        {
          match: { toolResultFor: "toolu_follow" },
          response: { events: [{ type: "text", text: "TOOL ROUND DONE" }] },
        },
        textReply("FOLLOW_TEXT", "FOLLOW-UP ANSWERED"),
      ],
    });
    const pi = scenario.pi(line);
    const run = await duringToolRound(pi, "[follow] run the slow command", {
      type: "follow_up",
      message: followUp,
    });

    // Pi holds a follow-up until the agent would stop: after the answer to the tool result.
    expect(executedIds(run)).toEqual(["toolu_follow"]);
    expect(committed(run)).toEqual([
      { role: "user", text: "[follow] run the slow command" },
      { role: "assistant", text: "" },
      { role: "toolResult", text: "FOLLOW_TOOL_DONE" },
      { role: "assistant", text: "TOOL ROUND DONE" },
      { role: "user", text: followUp },
      { role: "assistant", text: "FOLLOW-UP ANSWERED" },
    ]);
    expect(run.filter((event) => event.type === "agent_end")).toHaveLength(1);

    // The tool result went alone; the follow-up came as a new user turn of the same conversation:
    // Claude's history grew by exactly the answer and the follow-up.
    const requests = modelRequests(scenario.double);
    expect(requests).toHaveLength(3);
    const [, withResult, next] = requests;
    expect(toolResultText(withResult!.body, "toolu_follow")).toBe("FOLLOW_TOOL_DONE");
    expect(JSON.stringify(messagesOf(withResult!.body))).not.toContain("FOLLOW_TEXT");
    const before = conversationOf(withResult!.body);
    const after = conversationOf(next!.body);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toEqual([
      { role: "assistant", text: "TOOL ROUND DONE" },
      { role: "user", text: followUp },
    ]);
    const diag = scenario.diag();
    expect(diag.filter((record) => record.type === "claude_query_started")).toHaveLength(1);
    expect(diag.filter((record) => record.type === "content_without_pi_stream")).toEqual([]);
    scenario.expectQuiescent();
  });

  test("tool arguments that are not a JSON object never run in Pi: Claude hears why, and the turn goes on", async () => {
    const ran = "printf RAN > ran.txt";
    scenario = await Scenario.start({
      steps: [
        {
          match: { lastUserTextIncludes: "[bad-args]" },
          response: {
            events: [
              // Cut off mid-object: Claude Code answers it itself (InputValidationError).
              {
                type: "tool_use",
                id: "toolu_cut",
                nameFrom: bash,
                input: {},
                inputJson: `{"command": "${ran}"`,
              },
            ],
          },
        },
        {
          match: { toolResultFor: "toolu_cut" },
          response: {
            events: [
              // Valid JSON but an array: Claude Code spreads it into {"0": ...} and calls the handler.
              { type: "tool_use", id: "toolu_array", nameFrom: bash, input: {}, inputJson: `["${ran}"]` },
            ],
          },
        },
        {
          match: { toolResultFor: "toolu_array" },
          response: { events: [{ type: "text", text: "GAVE UP" }] },
        },
      ],
    });
    const pi = scenario.pi(line);
    const events = await scenario.turn(pi, "[bad-args] run it");

    expect(executedIds(events)).toEqual([]);
    expect(existsSync(join(scenario.environment.workspace, "ran.txt"))).toBe(false);
    expect(lastAssistant(events)).toMatchObject({ stopReason: "stop" });
    expect(textOf(lastAssistant(events))).toBe("GAVE UP");
    const results = modelRequests(scenario.double).at(-1)!.body;
    expect(toolResultBlock(results, "toolu_cut")).toMatchObject({ is_error: true });
    expect(toolResultText(results, "toolu_cut")).toContain("InputValidationError");
    expect(toolResultBlock(results, "toolu_array")).toMatchObject({ is_error: true });
    expect(toolResultText(results, "toolu_array")).toBe(
      "Tool call toolu_array (bash) was not run: its arguments are an array, not a JSON object. Call the tool again with a JSON object of arguments.",
    );
    const refused = scenario
      .diag()
      .filter(
        (record) => record.type === "tool_call_ledger_transition" && record.event === "tool_use_refused",
      );
    expect(refused.map((record) => [record.toolCallId, record.reason])).toEqual([
      ["toolu_cut", "invalid_arguments"],
      ["toolu_array", "invalid_arguments"],
    ]);
    scenario.expectQuiescent();
  });
});
