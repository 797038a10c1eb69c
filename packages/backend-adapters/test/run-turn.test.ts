import { fileURLToPath } from "node:url";
import type { BackendEvent } from "@bridgeworks/protocol";
import { afterEach, describe, expect, test } from "vitest";
import {
  createClaudeTranslator,
  createCodexTranslator,
  isSameProcess,
  type PreparedTurn,
  type RunningTurn,
  runTurn,
  type StreamTranslator,
} from "../src/index.js";

const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
const running: RunningTurn[] = [];
afterEach(async () => {
  // A turn whose result rejected (a throwing hook) rejects here too; its process is ended regardless.
  await Promise.allSettled(running.splice(0).map((turn) => turn.stop(200)));
});

/** A stand-in CLI: a shell script that replays recorded lines. */
function scripted(script: string, translator: StreamTranslator, conversationId?: string): PreparedTurn {
  return {
    backend: "codex",
    launch: { command: "sh", args: ["-c", script], cwd: fixtures, env: { PATH: process.env.PATH ?? "/bin" } },
    conversationId,
    resuming: false,
    translator,
  };
}

async function start(prepared: PreparedTurn, onEvent: (event: BackendEvent) => void = () => {}) {
  const log: string[] = [];
  const turn = await runTurn(prepared, {
    onSpawned: (identity) => log.push(`spawned ${identity.pid}`),
    onEvent: (event) => {
      log.push(event.type);
      onEvent(event);
    },
  });
  running.push(turn);
  return { turn, log };
}

describe("runTurn", () => {
  test("spawn is recorded first, then the events in stream order, then the classified exit", async () => {
    const { turn, log } = await start(scripted("cat codex/exec.jsonl", createCodexTranslator()));
    const result = await turn.result;
    expect(log).toEqual([
      `spawned ${turn.identity.pid}`,
      "backend.started",
      "warning",
      "tool.started",
      "tool.completed",
      "assistant.text",
      "usage",
    ]);
    expect(result).toMatchObject({
      outcome: { phase: "completed" },
      effects: ["tool_started", "assistant_text"],
      conversationId: "01a22b0b-6ae0-7b43-9b25-96748b537abc",
      exit: { code: 0, signal: null },
    });
  });

  test("a conversation known before spawn is kept when the stream never names one", async () => {
    const { turn } = await start(scripted("exit 3", createCodexTranslator(), "thread-before-spawn"));
    expect(await turn.result).toMatchObject({
      conversationId: "thread-before-spawn",
      effects: [],
      outcome: {
        phase: "failed",
        error: { code: "cli_crashed", message: "codex exited with code 3 (no turn.completed)" },
      },
    });
  });

  test("a translator abort stops the CLI and fails the turn with its error", async () => {
    const { turn, log } = await start(
      scripted(
        "head -n 1 claude/mcp-failed.jsonl; exec sleep 30",
        createClaudeTranslator({ mcpServerName: "floot" }),
      ),
    );
    const result = await turn.result;
    expect(result.outcome).toEqual({
      phase: "failed",
      error: { code: "bridge_unavailable", message: 'MCP server "floot" is failed' },
    });
    expect(result.exit.signal).toBe("SIGTERM");
    expect(log.slice(1)).toEqual(["backend.started", "error"]);
    expect(isSameProcess(turn.identity)).toBe(false);
  });

  test("stop() mid-turn is cancelled and ends the process group", async () => {
    let sawStart!: () => void;
    const started = new Promise<void>((resolve) => {
      sawStart = resolve;
    });
    const { turn } = await start(
      scripted("head -n 4 codex/exec.jsonl; sleep 30 & wait", createCodexTranslator()),
      (event) => {
        if (event.type === "tool.started") sawStart();
      },
    );
    await started;
    const result = await turn.stop(200);
    expect(result.outcome).toEqual({ phase: "cancelled" });
    // What happened before the stop still counts against a blind replay.
    expect(result.effects).toEqual(["tool_started"]);
    expect(isSameProcess(turn.identity)).toBe(false);
  });

  test("an event hook that throws stops the CLI and rejects the result with that error", async () => {
    const failure = new Error("journal is read-only");
    const { turn, log } = await start(
      scripted("cat codex/text.jsonl; exec sleep 30", createCodexTranslator()),
      () => {
        throw failure;
      },
    );
    await expect(turn.result).rejects.toBe(failure);
    expect(log.slice(1)).toEqual(["backend.started"]);
    expect(isSameProcess(turn.identity)).toBe(false);
  });

  test("a CLI flooding stdout with one endless line fails the turn as cli_output_too_large", async () => {
    const turn = await runTurn(
      scripted(
        "cat codex/text.jsonl; head -c 30000000 /dev/zero | tr '\\0' x; exec sleep 30",
        createCodexTranslator(),
      ),
      { onEvent: () => {} },
      { maxLineBytes: 1024 * 1024 },
    );
    running.push(turn);
    const result = await turn.result;
    expect(result.outcome).toEqual({
      phase: "failed",
      error: {
        code: "cli_output_too_large",
        message: "sh wrote a line of output longer than 1048576 bytes; the turn was stopped",
      },
    });
    expect(isSameProcess(turn.identity)).toBe(false);
  });

  test("a CLI that exits at once, saying nothing, fails as cli_crashed naming its exit", async () => {
    const turn = await runTurn(scripted("echo 'boom: no config' >&2; exit 3", createClaudeTranslator()), {
      onEvent: () => {},
    });
    running.push(turn);
    expect((await turn.result).outcome).toEqual({
      phase: "failed",
      error: { code: "cli_crashed", message: "claude exited with code 3: boom: no config (no result line)" },
    });
  });
});
