import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, inject, test } from "vitest";
import {
  lastAssistant,
  type PiEvent,
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
});
