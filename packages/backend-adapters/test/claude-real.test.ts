import { randomUUID } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { toolTurnScript } from "@bridgeworks/model-double";
import { afterEach, describe, expect, test } from "vitest";
import {
  type ClaudeAdapterOptions,
  claudeTranscriptPath,
  createClaudeAdapter,
  type TurnSpec,
} from "../src/index.js";
import {
  alwaysOk,
  echoMcp,
  expectNoProcessLeft,
  lastHistory,
  observeTurn,
  type RealWorld,
  stalls,
  startWorld,
  textsOf,
  turnTimeoutMs,
  twoTurns,
} from "./real-turns.js";

let world: RealWorld | undefined;
afterEach(async () => {
  await world?.dispose();
  world = undefined;
});

function claudeTurn(current: RealWorld, turn: Omit<TurnSpec, "cwd">, options: ClaudeAdapterOptions = {}) {
  const adapter = createClaudeAdapter({ baseEnv: current.environment.env, ...options });
  const prepared = adapter.prepareTurn({ cwd: current.environment.workspace, ...turn });
  return { prepared, ...observeTurn(current, prepared) };
}

function transcriptOf(current: RealWorld, sessionId: string): string {
  return claudeTranscriptPath(current.environment.claudeConfigDir, current.environment.workspace, sessionId);
}

describe("Claude Code 2.1.332 through the adapter, against the model double", {
  timeout: turnTimeoutMs,
}, () => {
  test("a text turn completes: session id first, thinking, text, usage; assistant_text is its effect", async () => {
    world = await startWorld({
      steps: [
        {
          response: {
            events: [
              { type: "thinking", thinking: "Considering the greeting." },
              { type: "text", text: "HELLO FROM CLAUDE", chunks: 2 },
            ],
          },
        },
      ],
    });
    const sessionId = randomUUID();
    const { prepared, events, result } = claudeTurn(
      world,
      { prompt: "say hello", conversation: { id: sessionId, established: false } },
      { includePartialMessages: true },
    );
    expect(prepared.launch.args).toContain("--session-id");

    const outcome = await result;
    expect(outcome).toMatchObject({
      outcome: { phase: "completed" },
      effects: ["assistant_text"],
      conversationId: sessionId,
      exit: { code: 0 },
    });
    expect(events[0]).toEqual({ type: "backend.started", conversationId: sessionId });
    expect(textsOf(events, "reasoning")).toEqual(["Considering the greeting."]);
    expect(textsOf(events, "assistant.text")).toEqual(["HELLO FROM CLAUDE"]);
    expect(events.filter((event) => event.type === "assistant.delta").length).toBeGreaterThan(0);
    expect(events.at(-1)?.type).toBe("usage");
    expect(existsSync(transcriptOf(world, sessionId))).toBe(true);
  });

  test("a tool turn: Bash and an MCP tool start and complete; both effects are flagged", async () => {
    world = await startWorld(
      toolTurnScript(
        [
          {
            id: "toolu_bash",
            nameFrom: { equals: "Bash" },
            input: { command: "printf 'BASH_%s' OK", description: "print a marker" },
          },
          { id: "toolu_echo", nameFrom: { equals: "mcp__floot__echo" }, input: { text: "hi" } },
        ],
        "tools done",
      ),
    );
    const { events, result } = claudeTurn(
      world,
      { prompt: "use the tools", mcp: echoMcp(world, " via floot") },
      // Tool search would defer MCP tools behind ToolSearch; the double calls them directly.
      { allowedTools: ["Bash"], env: { ENABLE_TOOL_SEARCH: "false" } },
    );

    const outcome = await result;
    expect(outcome.outcome).toEqual({ phase: "completed" });
    expect(outcome.effects).toEqual(["tool_started", "assistant_text"]);
    expect(events.filter((event) => event.type.startsWith("tool."))).toEqual([
      {
        type: "tool.started",
        toolId: "toolu_bash",
        name: "Bash",
        input: { command: "printf 'BASH_%s' OK", description: "print a marker" },
      },
      { type: "tool.completed", toolId: "toolu_bash", output: "BASH_OK", isError: false },
      { type: "tool.started", toolId: "toolu_echo", name: "mcp__floot__echo", input: { text: "hi" } },
      {
        type: "tool.completed",
        toolId: "toolu_echo",
        output: [{ type: "text", text: "echo: hi via floot" }],
        isError: false,
      },
    ]);
    expect(textsOf(events, "assistant.text")).toEqual(["tools done"]);
  });

  test("a second turn resumes the conversation: the double sees the first turn's history", async () => {
    world = await startWorld(twoTurns);
    const sessionId = randomUUID();
    const first = claudeTurn(world, {
      prompt: "FIRST PROMPT",
      conversation: { id: sessionId, established: false },
    });
    expect((await first.result).outcome).toEqual({ phase: "completed" });

    // Not marked established: the transcript on disk alone must switch it to --resume.
    const second = claudeTurn(world, {
      prompt: "SECOND PROMPT",
      conversation: { id: sessionId, established: false },
    });
    expect(second.prepared.resuming).toBe(true);
    expect(second.prepared.launch.args).toEqual(expect.arrayContaining(["--resume", sessionId]));
    const outcome = await second.result;
    expect(outcome).toMatchObject({ outcome: { phase: "completed" }, conversationId: sessionId });
    expect(second.events[0]).toEqual({ type: "backend.started", conversationId: sessionId });

    const history = lastHistory(world, "anthropic");
    expect(history).toContain("FIRST PROMPT");
    expect(history).toContain("FIRST ANSWER");
    expect(history).toContain("SECOND PROMPT");
  });

  test("resuming a conversation whose transcript was deleted is backend_conversation_missing", async () => {
    world = await startWorld(alwaysOk);
    const sessionId = randomUUID();
    const first = claudeTurn(world, { prompt: "first", conversation: { id: sessionId, established: false } });
    expect((await first.result).outcome).toEqual({ phase: "completed" });
    rmSync(transcriptOf(world, sessionId));

    const second = claudeTurn(world, {
      prompt: "second",
      conversation: { id: sessionId, established: true },
    });
    const outcome = await second.result;
    expect(outcome.outcome).toEqual({
      phase: "failed",
      error: {
        code: "backend_conversation_missing",
        message: `No conversation found with session ID: ${sessionId}`,
      },
    });
    expect(outcome.effects).toEqual([]);
  });

  test("a scripted 500 fails with the backend's message and no assistant_text effect", async () => {
    world = await startWorld({
      steps: [{ repeat: true, response: { error: { status: 500, message: "scripted server error" } } }],
    });
    const { events, result } = claudeTurn(
      world,
      { prompt: "fail please" },
      { env: { CLAUDE_CODE_MAX_RETRIES: "0" } },
    );

    const outcome = await result;
    expect(outcome.outcome).toMatchObject({
      phase: "failed",
      error: { code: "api_error", message: expect.stringContaining("API Error: 500 scripted server error") },
    });
    expect(outcome.effects).toEqual([]);
    expect(textsOf(events, "assistant.text")).toEqual([]);
    expect(events).toContainEqual(expect.objectContaining({ type: "error", code: "api_error" }));
  });

  test("an MCP mount that cannot start fails the turn as bridge_unavailable before any effect", async () => {
    world = await startWorld(alwaysOk);
    const mcp = echoMcp(world, "");
    const { result } = claudeTurn(world, {
      prompt: "hello",
      mcp: { ...mcp, mount: { command: process.execPath, args: ["/nonexistent/shim.mjs"] } },
    });

    const outcome = await result;
    expect(outcome.outcome).toEqual({
      phase: "failed",
      error: { code: "bridge_unavailable", message: 'MCP server "floot" is failed' },
    });
    expect(outcome.effects).toEqual([]);
  });

  test("stop() while the model stalls is cancelled and leaves no process", async () => {
    world = await startWorld(stalls);
    const { running, result } = claudeTurn(world, { prompt: "take your time" });
    await world.double.waitForRequest((request) => request.api === "anthropic", { timeoutMs: turnTimeoutMs });

    const turn = await running;
    await turn.stop(1_000);
    const outcome = await result;
    expect(outcome.outcome).toEqual({ phase: "cancelled" });
    expectNoProcessLeft(world, turn);
  });
});
