import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { toolTurnScript } from "@bridgeworks/model-double";
import { afterEach, describe, expect, test } from "vitest";
import { type CodexAdapterOptions, createCodexAdapter, type TurnSpec } from "../src/index.js";
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

const model = "gpt-5.1-codex";
let world: RealWorld | undefined;
afterEach(async () => {
  await world?.dispose();
  world = undefined;
});

function codexTurn(current: RealWorld, turn: Omit<TurnSpec, "cwd">, options: CodexAdapterOptions = {}) {
  const adapter = createCodexAdapter({ baseEnv: current.environment.env, ...options });
  const prepared = adapter.prepareTurn({ cwd: current.environment.workspace, ...turn });
  return { prepared, ...observeTurn(current, prepared) };
}

function rolloutsOf(current: RealWorld, threadId: string): string[] {
  const sessions = join(current.environment.codexHome, "sessions");
  return readdirSync(sessions, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(`${threadId}.jsonl`))
    .map((path) => join(sessions, path));
}

describe("Codex 0.171.0 through the adapter, against the model double", { timeout: turnTimeoutMs }, () => {
  test("a text turn completes: the thread id is the first event, then reasoning, text, usage", async () => {
    world = await startWorld(
      {
        steps: [
          {
            response: {
              events: [
                { type: "thinking", thinking: "Considering the greeting." },
                { type: "text", text: "HELLO FROM CODEX" },
              ],
            },
          },
        ],
      },
      model,
    );
    const { prepared, events, result } = codexTurn(world, { prompt: "say hello" });
    expect(prepared.conversationId).toBeUndefined();

    const outcome = await result;
    const [first] = events;
    expect(first?.type).toBe("backend.started");
    const threadId = first?.type === "backend.started" ? first.conversationId : "";
    expect(outcome).toMatchObject({
      outcome: { phase: "completed" },
      effects: ["assistant_text"],
      conversationId: threadId,
      exit: { code: 0 },
    });
    expect(textsOf(events, "reasoning")).toEqual(["Considering the greeting."]);
    expect(textsOf(events, "assistant.text")).toEqual(["HELLO FROM CODEX"]);
    expect(events.at(-1)?.type).toBe("usage");
    expect(rolloutsOf(world, threadId)).toHaveLength(1);
  });

  test("a tool turn: exec_command and an MCP tool start and complete; both effects are flagged", async () => {
    world = await startWorld(
      toolTurnScript(
        [
          { id: "call_exec", nameFrom: { equals: "exec_command" }, input: { cmd: "printf 'EXEC_%s' OK" } },
          { id: "call_echo", nameFrom: { endsWith: "__echo" }, input: { text: "hi" } },
        ],
        "tools done",
      ),
      model,
    );
    const { events, result } = codexTurn(world, {
      prompt: "use the tools",
      mcp: echoMcp(world, " via floot"),
    });

    const outcome = await result;
    expect(outcome.outcome).toEqual({ phase: "completed" });
    expect(outcome.effects).toEqual(["tool_started", "assistant_text"]);
    const toolEvents = events.filter((event) => event.type.startsWith("tool."));
    expect(toolEvents.map((event) => event.type)).toEqual([
      "tool.started",
      "tool.completed",
      "tool.started",
      "tool.completed",
    ]);
    expect(toolEvents[0]).toMatchObject({
      name: "command_execution",
      input: { command: expect.stringContaining("printf 'EXEC_%s' OK") },
    });
    expect(toolEvents[1]).toMatchObject({ output: "EXEC_OK", isError: false });
    expect(toolEvents[2]).toMatchObject({ name: "mcp__floot__echo", input: { text: "hi" } });
    expect(toolEvents[3]).toMatchObject({
      output: [{ type: "text", text: "echo: hi via floot" }],
      isError: false,
    });
    expect(textsOf(events, "assistant.text")).toEqual(["tools done"]);
  });

  test("a second turn resumes the thread: the double sees the first turn's history", async () => {
    world = await startWorld(twoTurns, model);
    const first = codexTurn(world, { prompt: "FIRST PROMPT" });
    const threadId = (await first.result).conversationId ?? "";
    expect(threadId).not.toBe("");

    const second = codexTurn(world, {
      prompt: "SECOND PROMPT",
      conversation: { id: threadId, established: true },
    });
    expect(second.prepared.launch.args.slice(0, 2)).toEqual(["exec", "resume"]);
    const outcome = await second.result;
    expect(outcome).toMatchObject({ outcome: { phase: "completed" }, conversationId: threadId });
    expect(second.events[0]).toEqual({ type: "backend.started", conversationId: threadId });

    const history = lastHistory(world, "openai");
    expect(history).toContain("FIRST PROMPT");
    expect(history).toContain("FIRST ANSWER");
    expect(history).toContain("SECOND PROMPT");
  });

  test("resuming a thread whose rollout was deleted is backend_conversation_missing", async () => {
    world = await startWorld(alwaysOk, model);
    const first = codexTurn(world, { prompt: "first" });
    const threadId = (await first.result).conversationId ?? "";
    for (const rollout of rolloutsOf(world, threadId)) rmSync(rollout);

    const second = codexTurn(world, { prompt: "second", conversation: { id: threadId, established: true } });
    const outcome = await second.result;
    expect(outcome.outcome).toEqual({
      phase: "failed",
      error: {
        code: "backend_conversation_missing",
        message: `thread/resume: thread/resume failed: no rollout found for thread id ${threadId} (code -32600)`,
      },
    });
    expect(outcome.effects).toEqual([]);
  });

  test("a scripted 400 fails with the backend's message and no assistant_text effect", async () => {
    world = await startWorld(
      { steps: [{ repeat: true, response: { error: { status: 400, message: "scripted bad request" } } }] },
      model,
    );
    const { events, result } = codexTurn(world, { prompt: "fail please" });

    const outcome = await result;
    expect(outcome.outcome).toEqual({
      phase: "failed",
      error: { code: "api_error", message: "scripted bad request" },
    });
    expect(outcome.effects).toEqual([]);
    expect(textsOf(events, "assistant.text")).toEqual([]);
  });

  test("stop() while the model stalls is cancelled and leaves no process", async () => {
    world = await startWorld(stalls, model);
    const { running, result, events } = codexTurn(world, { prompt: "take your time" });
    await world.double.waitForRequest((request) => request.api === "openai", { timeoutMs: turnTimeoutMs });

    const turn = await running;
    await turn.stop(1_000);
    const outcome = await result;
    expect(outcome.outcome).toEqual({ phase: "cancelled" });
    // The thread id was already known: a retry can resume it.
    expect(events[0]?.type).toBe("backend.started");
    expectNoProcessLeft(world, turn);
  });
});
