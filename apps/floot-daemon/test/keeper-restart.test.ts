import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Backend, TurnEventEnvelope } from "@bridgeworks/protocol";
import { isProcessAlive, waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import { FlootWorld } from "./daemon-harness.js";

// Issue 31: a daemon restart interrupts no running turn. The CLI runs under the keeper, which outlives
// the daemon (SIGTERM as a service manager's restart sends it, or SIGKILL); the next daemon proves the
// state dir's key to it, attaches to the CLI again and journals each of its lines once, in order. Real
// claude and codex through the built bundle.

const backends: Backend[] = ["claude", "codex"];
const restarts = ["SIGTERM", "SIGKILL"] as const;

let world: FlootWorld | undefined;

afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

async function restart(w: FlootWorld, how: (typeof restarts)[number]): Promise<void> {
  if (how === "SIGTERM") await w.stopDaemon();
  else await w.killDaemon();
  await w.startDaemon();
}

function shownText(events: TurnEventEnvelope[]): string {
  // Claude streams deltas and then the whole text; Codex reports the whole message.
  const deltas = events.flatMap(({ event }) => (event.type === "assistant.delta" ? [event.text] : []));
  if (deltas.length > 0) return deltas.join("");
  return events.flatMap(({ event }) => (event.type === "assistant.text" ? [event.text] : [])).join("");
}

function contiguous(events: TurnEventEnvelope[]): boolean {
  return events.every((envelope, position) => envelope.index === position);
}

describe.each(backends)("a restart keeps the turn running: %s", (backend) => {
  test.each(restarts)("%s while the answer streams: completed, every word once", async (how) => {
    const words = Array.from({ length: 12 }, (_, index) => `word${index}`).join(" ");
    world = await FlootWorld.create(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[stream]" },
          response: { events: [{ type: "text", text: words, chunks: 12, deltaDelayMs: 400 }] },
        },
      ],
    });
    const w = world;
    await w.startDaemon();
    const session = await w.createSession();
    const turn = await w.send(session.id, "[stream] say the words");
    // Mid-stream: lines journaled before the restart (Claude's first words; Codex's start), so the
    // next daemon reads them again without journaling them twice.
    await w.waitForTurn(
      turn.id,
      (t) => (backend === "claude" ? t.effects.includes("assistant_text") : t.conversationId !== undefined),
      "the stream under way",
      60_000,
    );
    const cli = (await w.turn(turn.id)).process!;
    expect((await w.turn(turn.id)).stdoutThrough).toBeGreaterThan(0);
    await restart(w, how);
    const done = await w.waitForEnd(turn.id, 90_000);
    expect(done.phase, JSON.stringify(done.error)).toBe("completed");
    // The same CLI went on: no second process, no replay.
    expect(done.process).toEqual(cli);
    expect(done.attempt).toBe(1);
    expect(await w.turns(session.id)).toHaveLength(1);
    const events = await w.events(turn.id);
    expect(contiguous(events)).toBe(true);
    expect(shownText(events)).toBe(words);
    expect(w.requestsWith("[stream]")).toBe(1);
  });

  test.each(restarts)("%s during a 4-second Bash tool: completed, the tool ran once", async (how) => {
    const markerName = "keeper-marker.txt";
    const callId = backend === "claude" ? "toolu_kept" : "call_kept";
    world = await FlootWorld.create(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[tool]" },
          response: {
            events: [
              {
                type: "tool_use",
                id: callId,
                nameFrom: { equals: backend === "claude" ? "Bash" : "exec_command" },
                input:
                  backend === "claude"
                    ? { command: `sleep 4; echo ran >> ${markerName}`, description: "run it" }
                    : { cmd: `sleep 4; echo ran >> ${markerName}` },
              },
            ],
          },
        },
        { repeat: true, response: { events: [{ type: "text", text: "after the tool" }] } },
      ],
    });
    const w = world;
    await w.startDaemon();
    const session = await w.createSession();
    const marker = join(session.workspace, markerName);
    try {
      const turn = await w.send(session.id, "[tool] run the slow command");
      await w.waitForTurn(turn.id, (t) => t.effects.includes("tool_started"), "tool started", 60_000);
      expect(existsSync(marker)).toBe(false);
      await restart(w, how);
      const done = await w.waitForEnd(turn.id, 90_000);
      expect(done.phase, JSON.stringify(done.error)).toBe("completed");
      expect(readFileSync(marker, "utf8")).toBe("ran\n");
      const events = await w.events(turn.id);
      expect(contiguous(events)).toBe(true);
      expect(events.filter(({ event }) => event.type === "tool.started")).toHaveLength(1);
      expect(shownText(events)).toContain("after the tool");
      expect(await w.turns(session.id)).toHaveLength(1);
    } finally {
      rmSync(marker, { force: true });
    }
  });
});

describe("the keeper", () => {
  test("a reboot (the keeper and its CLIs killed with the daemon) falls back to recovery: interrupted", async () => {
    world = await FlootWorld.create("claude", {
      steps: [
        {
          match: { lastUserTextIncludes: "[stall]" },
          response: { events: [{ type: "text", text: "PARTIAL" }, { type: "stall" }] },
        },
      ],
    });
    const w = world;
    await w.startDaemon();
    const session = await w.createSession();
    const turn = await w.send(session.id, "[stall] begin");
    await w.waitForTurn(turn.id, (t) => t.effects.includes("assistant_text"), "text journaled");
    const cli = (await w.turn(turn.id)).process!;
    await w.restartAfterReboot();
    const ended = await w.waitForEnd(turn.id);
    expect(ended.phase).toBe("interrupted");
    expect(isProcessAlive(cli.pid)).toBe(false);
  });

  test("once its last turn ends and the daemon stops, the keeper is gone", async () => {
    world = await FlootWorld.create("claude", {
      steps: [{ repeat: true, response: { events: [{ type: "text", text: "hi" }] } }],
    });
    const w = world;
    await w.startDaemon();
    const session = await w.createSession();
    const turn = await w.send(session.id, "hello");
    expect((await w.waitForEnd(turn.id)).phase).toBe("completed");
    const keeper = await w.keeperPid();
    expect(keeper).toBeDefined();
    await w.stopDaemon();
    await waitUntil(() => !isProcessAlive(keeper!), 10_000, "keeper exits with nothing kept");
  });
});
