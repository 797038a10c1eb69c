import { BackendEvent, effectsOfEvent } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { createCodexTranslator } from "../src/index.js";
import { eventTypes, fixtureLines, fixtureStderr, replay } from "./fixtures.js";

function effectsOf(events: readonly BackendEvent[]): string[] {
  return [...new Set(events.flatMap((event) => effectsOfEvent(event)))];
}

describe("Codex exec --json translation (recorded lines of codex 0.171.0)", () => {
  test("every event it produces is a valid protocol BackendEvent", () => {
    for (const name of ["text", "exec", "mcp", "error-400", "error-500", "rate-limit-429"]) {
      const { events } = replay(createCodexTranslator(), fixtureLines("codex", name));
      for (const event of events) expect(BackendEvent.parse(event)).toEqual(event);
    }
  });

  test("thread.started is returned as backend.started from that very line", () => {
    const [first = ""] = fixtureLines("codex", "text");
    expect(createCodexTranslator().translate(first).events).toEqual([
      { type: "backend.started", conversationId: "01a22b0b-6ae0-7b43-9b25-96748b537abc" },
    ]);
  });

  test("a text turn: notice, reasoning, agent message, usage", () => {
    const { events, outcome } = replay(createCodexTranslator(), fixtureLines("codex", "text"));
    expect(events.slice(1)).toEqual([
      {
        type: "warning",
        code: "backend_notice",
        message:
          "Model metadata for `gpt-5.1-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.",
      },
      { type: "reasoning", text: "Let me think." },
      { type: "assistant.text", text: "HELLO TEXT" },
      { type: "usage", input: 12, output: 5, cacheRead: 0, cacheWrite: 0 },
    ]);
    expect(outcome).toEqual({ phase: "completed" });
    expect(effectsOf(events)).toEqual(["assistant_text"]);
  });

  test("a command execution starts on item.started and completes with its output", () => {
    const { events, outcome } = replay(createCodexTranslator(), fixtureLines("codex", "exec"));
    expect(events.filter((event) => event.type.startsWith("tool."))).toEqual([
      {
        type: "tool.started",
        toolId: "item_1",
        name: "command_execution",
        input: { command: "/bin/bash -lc 'printf EXEC_OK'" },
      },
      { type: "tool.completed", toolId: "item_1", output: "EXEC_OK", isError: false },
    ]);
    expect(effectsOf(events)).toEqual(["tool_started", "assistant_text"]);
    expect(outcome).toEqual({ phase: "completed" });
  });

  test("an MCP tool call is named mcp__server__tool", () => {
    const { events } = replay(createCodexTranslator(), fixtureLines("codex", "mcp"));
    expect(events.filter((event) => event.type.startsWith("tool."))).toEqual([
      { type: "tool.started", toolId: "item_1", name: "mcp__floot__echo", input: { text: "hi" } },
      {
        type: "tool.completed",
        toolId: "item_1",
        output: [{ type: "text", text: "echo: hi" }],
        isError: false,
      },
    ]);
  });

  test("a file_change (completed only) reports its start and completion together", () => {
    const translator = createCodexTranslator();
    const line = JSON.stringify({
      type: "item.completed",
      item: {
        id: "item_3",
        type: "file_change",
        changes: [{ path: "a.txt", kind: "add" }],
        status: "completed",
      },
    });
    expect(translator.translate(line).events).toEqual([
      {
        type: "tool.started",
        toolId: "item_3",
        name: "file_change",
        input: { changes: [{ path: "a.txt", kind: "add" }] },
      },
      { type: "tool.completed", toolId: "item_3", isError: false },
    ]);
  });

  test("a 400 fails with the API's own message, reported once", () => {
    const { events, outcome } = replay(createCodexTranslator(), fixtureLines("codex", "error-400"), {
      code: 1,
    });
    expect(events.filter((event) => event.type === "error")).toEqual([
      { type: "error", code: "api_error", message: "scripted failure" },
    ]);
    expect(effectsOf(events)).toEqual([]);
    expect(outcome).toEqual({ phase: "failed", error: { code: "api_error", message: "scripted failure" } });
  });

  test("a 500 fails with what codex reports for it", () => {
    const { outcome } = replay(createCodexTranslator(), fixtureLines("codex", "error-500"), { code: 1 });
    expect(outcome).toEqual({
      phase: "failed",
      error: {
        code: "api_error",
        message: "We’re currently experiencing high demand, which may cause temporary errors.",
      },
    });
  });

  test("a 429 is rate_limited", () => {
    const { outcome } = replay(createCodexTranslator(), fixtureLines("codex", "rate-limit-429"), { code: 1 });
    expect(outcome).toEqual({
      phase: "failed",
      error: { code: "rate_limited", message: "exceeded retry limit, last status: 429 Too Many Requests" },
    });
  });

  test("resuming an unknown thread (stderr only) is backend_conversation_missing", () => {
    const { outcome } = replay(createCodexTranslator(), [], {
      code: 1,
      stderrTail: fixtureStderr("codex", "missing-thread"),
    });
    expect(outcome).toEqual({
      phase: "failed",
      error: {
        code: "backend_conversation_missing",
        message:
          "thread/resume: thread/resume failed: no rollout found for thread id 01a22b07-0000-7000-8000-000000000000 (code -32600)",
      },
    });
  });

  test("a thread with an active writer is session_in_use", () => {
    const { outcome } = replay(createCodexTranslator(), [], {
      code: 1,
      stderrTail: fixtureStderr("codex", "session-in-use"),
    });
    expect(outcome).toMatchObject({ phase: "failed", error: { code: "session_in_use" } });
    expect(outcome.phase === "failed" && outcome.error.message).toMatch(
      /^thread\/resume: .* already has an active writer/,
    );
  });

  test("no turn.completed: cancelled when stopped, else cli_crashed", () => {
    const lines = fixtureLines("codex", "exec").slice(0, 4);
    expect(replay(createCodexTranslator(), lines, { code: null, signal: "SIGTERM" }, true).outcome).toEqual({
      phase: "cancelled",
    });
    expect(replay(createCodexTranslator(), lines, { code: 0 }).outcome).toEqual({
      phase: "failed",
      error: { code: "cli_crashed", message: "codex exited with code 0 (no turn.completed)" },
    });
    expect(eventTypes(replay(createCodexTranslator(), lines).events)).toEqual([
      "backend.started",
      "warning",
      "tool.started",
    ]);
  });
});
