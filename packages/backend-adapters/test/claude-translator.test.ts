import { BackendEvent, effectsOfEvent } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { createClaudeTranslator } from "../src/index.js";
import { eventTypes, fixtureLines, fixtureStderr, replay } from "./fixtures.js";

function effectsOf(events: readonly BackendEvent[]): string[] {
  return [...new Set(events.flatMap((event) => effectsOfEvent(event)))];
}

describe("Claude Code stream translation (recorded lines of claude 2.1.332)", () => {
  test("every event it produces is a valid protocol BackendEvent", () => {
    for (const name of ["text", "bash", "mcp", "api-error-400", "rate-limit-429", "mcp-failed"]) {
      const { events } = replay(
        createClaudeTranslator({ mcpServerName: "floot" }),
        fixtureLines("claude", name),
      );
      for (const event of events) expect(BackendEvent.parse(event)).toEqual(event);
    }
  });

  test("a text turn with partial messages: conversation first, thinking, deltas, whole text, usage", () => {
    const { events, outcome } = replay(createClaudeTranslator(), fixtureLines("claude", "text"));
    expect(events).toEqual([
      { type: "backend.started", conversationId: "b23e0a45-bc6b-462d-a710-8b6229eebc54" },
      { type: "reasoning", text: "Let me think." },
      { type: "assistant.delta", text: "HELLO" },
      { type: "assistant.delta", text: " TEXT" },
      { type: "assistant.text", text: "HELLO TEXT" },
      {
        type: "usage",
        input: 12,
        output: 5,
        cacheRead: 0,
        cacheWrite: 0,
        costUsd: 0.00014800000000000002,
        // The last request's input and output (the fixture's `modelUsage`, and so its window, was trimmed).
        contextUsed: 17,
      },
    ]);
    expect(outcome).toEqual({ phase: "completed" });
    expect(effectsOf(events)).toEqual(["assistant_text"]);
  });

  test("the context use: the last request's tokens, against the window the result line's modelUsage names", () => {
    // The shapes of claude 2.1.332's assistant and result lines, as it printed them against the double
    // (2026-12-07): each assistant message carries its request's usage; the result, `modelUsage` per model.
    const assistant = (input: number, cached: number, output: number) =>
      JSON.stringify({
        type: "assistant",
        message: {
          model: "claude-opus-5-5",
          content: [{ type: "text", text: "ok" }],
          usage: {
            input_tokens: input,
            output_tokens: output,
            cache_read_input_tokens: cached,
            cache_creation_input_tokens: 0,
          },
        },
      });
    const result = JSON.stringify({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "ok",
      usage: {
        input_tokens: 24000,
        output_tokens: 60,
        cache_read_input_tokens: 16000,
        cache_creation_input_tokens: 0,
      },
      total_cost_usd: 0.05,
      modelUsage: {
        "claude-haiku-4-5": { inputTokens: 300, outputTokens: 10, contextWindow: 200000 },
        "claude-opus-5-5": {
          inputTokens: 24000,
          outputTokens: 60,
          contextWindow: 1000000,
          maxOutputTokens: 128000,
        },
      },
    });
    const { events } = replay(createClaudeTranslator(), [
      assistant(12000, 8000, 30),
      assistant(12500, 8000, 40),
      result,
    ]);
    expect(events.at(-1)).toMatchObject({ type: "usage", contextUsed: 20540, contextWindow: 1000000 });
    // A modelUsage in a shape it does not know costs the window, not the usage.
    const drifted = result.replace('"contextWindow":1000000', '"contextWindow":"1M"');
    const { events: without } = replay(createClaudeTranslator(), [assistant(10, 0, 5), drifted]);
    expect(without.at(-1)).toMatchObject({ type: "usage", input: 24000, contextUsed: 15 });
    expect(without.at(-1)).not.toHaveProperty("contextWindow");
  });

  test("a Bash tool_use is a tool start; its tool_result completes it", () => {
    const { events, outcome } = replay(createClaudeTranslator(), fixtureLines("claude", "bash"));
    expect(eventTypes(events)).toEqual([
      "backend.started",
      "tool.started",
      "tool.completed",
      "assistant.text",
      "usage",
    ]);
    expect(events[1]).toEqual({
      type: "tool.started",
      toolId: "toolu_bash1",
      name: "Bash",
      input: { command: "printf BASH_OK", description: "marker" },
    });
    expect(events[2]).toEqual({
      type: "tool.completed",
      toolId: "toolu_bash1",
      output: "BASH_OK",
      isError: false,
    });
    expect(outcome).toEqual({ phase: "completed" });
    expect(effectsOf(events)).toEqual(["tool_started", "assistant_text"]);
  });

  test("an MCP tool call keeps its mcp__server__tool name and content blocks", () => {
    const { events } = replay(
      createClaudeTranslator({ mcpServerName: "floot" }),
      fixtureLines("claude", "mcp"),
    );
    expect(events.filter((event) => event.type.startsWith("tool."))).toEqual([
      { type: "tool.started", toolId: "toolu_mcp1", name: "mcp__floot__echo", input: { text: "hi" } },
      {
        type: "tool.completed",
        toolId: "toolu_mcp1",
        output: [{ type: "text", text: "echo: hi" }],
        isError: false,
      },
    ]);
  });

  test("an API error: the <synthetic> message is an error, not assistant text; is_error wins over subtype", () => {
    const lines = fixtureLines("claude", "api-error-400");
    expect(lines.at(-1)).toContain('"subtype":"success"');
    const { events, outcome } = replay(createClaudeTranslator(), lines, { code: 1 });
    expect(events).toContainEqual({
      type: "error",
      code: "api_error",
      message: "API Error: 400 scripted failure",
    });
    expect(eventTypes(events)).not.toContain("assistant.text");
    expect(effectsOf(events)).toEqual([]);
    expect(outcome).toEqual({
      phase: "failed",
      error: { code: "api_error", message: "API Error: 400 scripted failure" },
    });
  });

  test("a 429 is rate_limited", () => {
    const { events, outcome } = replay(createClaudeTranslator(), fixtureLines("claude", "rate-limit-429"), {
      code: 1,
    });
    const message = "API Error: Request rejected (429) · slow down";
    expect(events).toContainEqual({ type: "error", code: "rate_limited", message });
    expect(outcome).toEqual({ phase: "failed", error: { code: "rate_limited", message } });
  });

  test("resuming an unknown session is backend_conversation_missing", () => {
    const { outcome } = replay(createClaudeTranslator(), fixtureLines("claude", "missing-conversation"), {
      code: 1,
      stderrTail: fixtureStderr("claude", "missing-conversation"),
    });
    expect(outcome).toEqual({
      phase: "failed",
      error: {
        code: "backend_conversation_missing",
        message: "No conversation found with session ID: 4a557e88-32aa-4f66-b490-01bdec9a918b",
      },
    });
  });

  test("a session id already in use (stderr only, no stdout) is session_in_use", () => {
    const { outcome } = replay(createClaudeTranslator(), [], {
      code: 1,
      stderrTail: fixtureStderr("claude", "session-in-use"),
    });
    expect(outcome).toEqual({
      phase: "failed",
      error: {
        code: "session_in_use",
        message: "Session ID 4c770da2-74d2-433f-abfb-1663ee3863ee is already in use.",
      },
    });
  });

  test("a mounted MCP server that failed at init aborts the turn before any effect", () => {
    const lines = fixtureLines("claude", "mcp-failed");
    const mounted = replay(createClaudeTranslator({ mcpServerName: "floot" }), lines.slice(0, 1));
    const message = 'MCP server "floot" is failed';
    expect(mounted.aborts).toEqual([{ code: "bridge_unavailable", message }]);
    expect(mounted.events).toContainEqual({ type: "error", code: "bridge_unavailable", message });

    const notMounted = replay(createClaudeTranslator(), lines);
    expect(notMounted.aborts).toEqual([]);
    expect(notMounted.outcome).toEqual({ phase: "completed" });
  });

  test("no result line: cancelled when the caller stopped it, else cli_crashed", () => {
    const lines = fixtureLines("claude", "bash").slice(0, 2);
    expect(replay(createClaudeTranslator(), lines, { code: null, signal: "SIGTERM" }, true).outcome).toEqual({
      phase: "cancelled",
    });
    expect(
      replay(createClaudeTranslator(), lines, { code: null, signal: "SIGKILL", stderrTail: "boom\n" })
        .outcome,
    ).toEqual({
      phase: "failed",
      error: { code: "cli_crashed", message: "claude was killed by SIGKILL: boom (no result line)" },
    });
  });

  test("a result that arrived before the stop still decides the outcome", () => {
    const { outcome } = replay(
      createClaudeTranslator(),
      fixtureLines("claude", "bash"),
      { signal: "SIGTERM" },
      true,
    );
    expect(outcome).toEqual({ phase: "completed" });
  });

  test("non-JSON output is a warning; lines it has no use for are ignored", () => {
    const translator = createClaudeTranslator();
    expect(translator.translate("not json").events).toEqual([
      { type: "warning", code: "unparsed_line", message: "not json" },
    ]);
    expect(translator.translate('{"type":"rate_limit_event","rate_limit_info":{}}').events).toEqual([]);
    expect(
      translator.translate(
        '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":598,"error_status":500,"error":"server_error"}',
      ).events,
    ).toEqual([
      {
        type: "warning",
        code: "api_retry",
        message: "retrying after API error 500 server_error (attempt 1 of 10)",
      },
    ]);
  });
});
