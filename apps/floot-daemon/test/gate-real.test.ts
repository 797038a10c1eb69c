import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "@bridgeworks/model-double";
import type { Backend, TurnEventEnvelope } from "@bridgeworks/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { FlootWorld } from "./daemon-harness.js";

// The pre-tool gate with the real claude and codex, through the built daemon: every tool call is in
// the journal before it runs; without the daemon no tool runs and the model is told why; a turn that
// only read is replayed.

let world: FlootWorld | undefined;
afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

const shellTool = (backend: Backend) => ({ equals: backend === "claude" ? "Bash" : "exec_command" });
const shellInput = (backend: Backend, command: string) =>
  backend === "claude" ? { command, description: "run it" } : { cmd: command };
const bodyText = (request: RecordedRequest) => JSON.stringify(request.body);

function indexOf(events: TurnEventEnvelope[], type: string, toolId: string): number {
  return events.findIndex(
    (envelope) =>
      envelope.event.type === type && "toolId" in envelope.event && envelope.event.toolId === toolId,
  );
}

describe.each<Backend>(["claude", "codex"])("the pre-tool gate: %s", (backend) => {
  test("a tool call is admitted into the journal before it runs", async () => {
    const id = backend === "claude" ? "toolu_gated" : "call_gated";
    world = await FlootWorld.create(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[gated]" },
          response: {
            events: [
              {
                type: "tool_use",
                id,
                nameFrom: shellTool(backend),
                input: shellInput(backend, "echo ran >> gated.txt"),
              },
            ],
          },
        },
        { match: { toolResultFor: id }, response: { events: [{ type: "text", text: "DONE" }] } },
      ],
    });
    await world.startDaemon();
    const session = await world.createSession();
    const turn = await world.send(session.id, "[gated] run it");
    const done = await world.waitForEnd(turn.id);
    expect(done.phase, JSON.stringify(done.error)).toBe("completed");
    const events = await world.events(turn.id);
    const admitted = indexOf(events, "tool.admitted", id);
    expect(admitted).toBeGreaterThan(-1);
    expect(events[admitted]?.event).toMatchObject({
      type: "tool.admitted",
      name: "Bash",
      inputPreview: expect.stringContaining("echo ran >> gated.txt"),
    });
    // Codex's stream names a command by its item id, not the call id its hook sees.
    const completed =
      backend === "claude"
        ? indexOf(events, "tool.completed", id)
        : events.findIndex((envelope) => envelope.event.type === "tool.completed");
    expect(admitted).toBeLessThan(completed);
    expect(existsSync(join(session.workspace, "gated.txt"))).toBe(true);
    // Its PostToolUse hook reported it finished, by the id its PreToolUse hook gave (Codex's call id).
    expect(world.toolAdmissions(turn.id)).toEqual([
      expect.objectContaining({ toolCallId: id, toolName: "Bash", completedAt: expect.any(String) }),
    ]);
  });

  /** A turn whose one shell call reaches the model's stream only after the daemon was killed. */
  async function lateCall(id: string, marker: string, gateTimeoutMs: string) {
    world = await FlootWorld.create(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[orphan]" },
          // The tool call arrives only after the daemon is dead.
          response: {
            events: [
              { type: "delay", ms: 2_500 },
              {
                type: "tool_use",
                id,
                nameFrom: shellTool(backend),
                input: shellInput(backend, `echo ran >> ${marker}`),
              },
            ],
          },
        },
        { repeat: true, response: { events: [{ type: "text", text: "understood" }] } },
      ],
    });
    const w = world;
    await w.startDaemon({ FLOOT_GATE_TIMEOUT_MS: gateTimeoutMs });
    const session = await w.createSession();
    const turn = await w.send(session.id, "[orphan] run it");
    await w.double.waitForRequest((request) => bodyText(request).includes("[orphan]"), { timeoutMs: 30_000 });
    await w.waitForTurn(turn.id, (t) => t.process !== undefined, "running");
    await w.killDaemon();
    return { w, session, turn };
  }

  test("with the daemon gone past the gate's bound, the tool does not run and the model is told why", async () => {
    const id = backend === "claude" ? "toolu_orphan" : "call_orphan";
    const marker = "orphaned.txt";
    const { w, session, turn } = await lateCall(id, marker, "3000");

    // The CLI goes on under the keeper: its hook waits for a daemon (3 s here), finds none, blocks the
    // call, and the model reads why (measured: claude 2.1.332, codex 0.171).
    const followUp = await w.double.waitForRequest(
      (request) => request.index > 0 && bodyText(request).includes(id),
      { timeoutMs: 30_000 },
    );
    expect(bodyText(followUp)).toContain("floot: this tool call was NOT run");
    expect(bodyText(followUp)).toContain("cannot be reached");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(existsSync(join(session.workspace, marker))).toBe(false);
    // The next daemon adopts the turn, which ends as its model says, the call never run.
    await w.startDaemon();
    expect((await w.waitForEnd(turn.id)).phase).toBe("completed");
    expect(existsSync(join(session.workspace, marker))).toBe(false);
  });

  test("with the daemon back within the gate's bound, the new daemon admits the call and it runs once", async () => {
    const id = backend === "claude" ? "toolu_back" : "call_back";
    const marker = "back.txt";
    const { w, session, turn } = await lateCall(id, marker, "60000");
    // The call reaches the hook while no daemon runs: it waits, and the next daemon answers it.
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(existsSync(join(session.workspace, marker))).toBe(false);
    await w.startDaemon();
    const done = await w.waitForEnd(turn.id, 90_000);
    expect(done.phase, JSON.stringify(done.error)).toBe("completed");
    expect(readFileSync(join(session.workspace, marker), "utf8")).toBe("ran\n");
    const admitted = (await w.events(turn.id)).filter((e) => e.event.type === "tool.admitted");
    expect(admitted).toHaveLength(1);
  });

  test("a daemon too slow to answer the gate: the tool does not run and the model is told why", async () => {
    const id = backend === "claude" ? "toolu_slow" : "call_slow";
    const marker = "slow.txt";
    world = await FlootWorld.create(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[slow]" },
          response: {
            events: [
              {
                type: "tool_use",
                id,
                nameFrom: shellTool(backend),
                input: shellInput(backend, `echo ran >> ${marker}`),
              },
            ],
          },
        },
        { repeat: true, response: { events: [{ type: "text", text: "understood" }] } },
      ],
    });
    const w = world;
    // The daemon is blocked for 6 s when the request arrives; the hook waits 2 s at most.
    await w.startDaemon(
      { FLOOT_GATE_TIMEOUT_MS: "2000" },
      { "gate:received": { action: "hold", ms: 6_000 } },
    );
    const session = await w.createSession();
    const turn = await w.send(session.id, "[slow] run it");
    const followUp = await w.double.waitForRequest(
      (request) => request.index > 0 && bodyText(request).includes(id),
      { timeoutMs: 30_000 },
    );
    expect(bodyText(followUp)).toContain("floot: this tool call was NOT run");
    expect(bodyText(followUp)).toContain("did not record it within 2 s");
    const done = await w.waitForEnd(turn.id);
    expect(done.phase, JSON.stringify(done.error)).toBe("completed");
    expect(existsSync(join(session.workspace, marker))).toBe(false);
  });

  test("a turn that only read is replayed after a crash at its gate; declared effectful, it is not", async () => {
    const readTool = backend === "claude" ? "Read" : "view_image";
    const readInput = (path: string) => (backend === "claude" ? { file_path: path } : { path });
    world = await FlootWorld.create(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[look]" },
          repeat: true,
          response: {
            events: [
              {
                type: "tool_use",
                nameFrom: backend === "claude" ? { equals: "Read" } : { equals: "view_image" },
                input: readInput("notes.png"),
              },
            ],
          },
        },
        { repeat: true, response: { events: [{ type: "text", text: "LOOKED" }] } },
      ],
    });
    const w = world;
    const prepare = (workspace: string) => {
      mkdirSync(workspace, { recursive: true });
      writeFileSync(join(workspace, "notes.png"), "not really an image\n");
    };

    // Killed the moment the read is admitted (committed, hook not answered): nothing had an effect.
    await w.startDaemon({}, { "gate:committed": { action: "kill" } });
    const reader = await w.createSession({
      workspace: join(w.env.root, "reader"),
      ...(backend === "claude" && { allowedTools: ["Read"] }),
    });
    prepare(reader.workspace);
    const first = await w.send(reader.id, "[look] at the notes");
    await w.daemonExited();
    // The keeper killed too, its CLI orphaned (fenced at start): recovery decides, not adoption.
    await w.killKeeper({ clis: false });
    await w.startDaemon({}, {});
    const [original, replay] = await w.turns(reader.id);
    expect(original).toMatchObject({ phase: "interrupted", effects: [] });
    expect(replay).toMatchObject({ replayOf: first.id, attempt: 2 });
    expect((await w.waitForEnd(replay!.id)).phase).toBe("completed");
    const admissions = (await w.events(first.id)).filter((e) => e.event.type === "tool.admitted");
    expect(admissions.map((e) => e.event)).toEqual([
      expect.objectContaining({ name: readTool, effectFree: true }),
    ]);

    // The same read in a session that declares nothing effect-free is an effect: never replayed.
    await w.killDaemon();
    await w.startDaemon({}, { "gate:committed": { action: "kill" } });
    const strict = await w.createSession({
      workspace: join(w.env.root, "strict"),
      effectFreeTools: [],
      ...(backend === "claude" && { allowedTools: ["Read"] }),
    });
    expect(strict.effectFreeTools).toEqual([]);
    prepare(strict.workspace);
    const second = await w.send(strict.id, "[look] at the notes");
    await w.daemonExited();
    await w.killKeeper({ clis: false });
    await w.startDaemon();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const strictTurns = await w.turns(strict.id);
    expect(strictTurns).toHaveLength(1);
    expect(strictTurns[0]).toMatchObject({ id: second.id, phase: "interrupted", effects: ["tool_started"] });
  });
});
