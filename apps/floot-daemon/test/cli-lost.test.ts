import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Backend, FlootCliLostDecided, FlootDaemonStatus, TurnRecord } from "@bridgeworks/protocol";
import { waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import { FlootWorld } from "./daemon-harness.js";

// When a turn's CLI is gone for good (a reboot: the daemon, its keeper and the CLI killed together),
// with the daemon's default `FLOOT_AFTER_CLI_LOST=continue`, through the built bundle and the real
// claude and codex: a turn whose every call finished carries on by itself on its conversation; one
// whose call may have run halfway waits on a person, who runs it again, skips it or stops, once.

let world: FlootWorld | undefined;
afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

const continueSetting = { FLOOT_AFTER_CLI_LOST: "continue" };
const markerName = "cut-marker.txt";
const shellCall = (backend: Backend, id: string, command: string) => ({
  type: "tool_use" as const,
  id,
  nameFrom: { equals: backend === "claude" ? "Bash" : "exec_command" },
  input: backend === "claude" ? { command, description: "run it" } : { cmd: command },
});

async function status(w: FlootWorld): Promise<FlootDaemonStatus> {
  return w.client.request<FlootDaemonStatus>("GET", "/v1/status");
}

async function continuationOf(w: FlootWorld, turn: TurnRecord): Promise<TurnRecord> {
  const turns = await w.turns(turn.sessionId);
  const continuation = turns.find((each) => each.continues === turn.id);
  if (!continuation) throw new Error(`turn ${turn.id} has no continuation: ${JSON.stringify(turns)}`);
  return continuation;
}

describe.each<Backend>(["claude", "codex"])("after a reboot: %s", (backend) => {
  const id = (name: string) => (backend === "claude" ? `toolu_${name}` : `call_${name}`);

  test("every call finished: the turn carries on by itself in a continuation that is told so, and completes", async () => {
    world = await FlootWorld.create(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[work]" },
          response: { events: [shellCall(backend, id("quick"), `echo ran >> ${markerName}`)] },
        },
        // After the call: text, then the stream stalls, as a model does mid-answer.
        {
          match: { toolResultFor: id("quick") },
          response: { events: [{ type: "text", text: "Half of the answer" }, { type: "stall" }] },
        },
        {
          match: { lastUserTextIncludes: "Every tool call you started had finished" },
          response: { events: [{ type: "text", text: "CARRIED ON" }] },
        },
      ],
    });
    const w = world;
    await w.startDaemon(continueSetting);
    const session = await w.createSession();
    const marker = join(session.workspace, markerName);
    const turn = await w.send(session.id, "[work] do it");
    await w.waitForTurn(turn.id, (t) => t.effects.includes("assistant_text"), "text after the call", 120_000);
    expect(w.toolAdmissions(turn.id)).toEqual([
      expect.objectContaining({ toolCallId: id("quick"), completedAt: expect.any(String) }),
    ]);

    await w.restartAfterReboot(continueSetting);
    expect((await status(w)).atStart).toMatchObject({ continued: 1, waitingOnYou: 0, interrupted: 0 });
    const ended = await w.turn(turn.id);
    expect(ended).toMatchObject({ phase: "interrupted", error: { code: "daemon_restarted" } });
    const continuation = await continuationOf(w, turn);
    const done = await w.waitForEnd(continuation.id, 90_000);
    expect(done.phase, JSON.stringify(done.error)).toBe("completed");
    expect(done).toMatchObject({ continues: turn.id, attempt: 2 });
    // On the same conversation, and the call ran once.
    expect(done.conversationId).toBe(ended.conversationId);
    expect(readFileSync(marker, "utf8")).toBe("ran\n");
    expect(w.requestsWith("Every tool call you started had finished")).toBe(1);
  });

  test("a reboot during a 4-second call: the turn waits on you with the call; run it again runs it once more, once", async () => {
    world = await FlootWorld.create(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[slow]" },
          response: { events: [shellCall(backend, id("slow"), `sleep 4; echo ran >> ${markerName}`)] },
        },
        {
          match: { lastUserTextIncludes: "The user asked you to run it again" },
          response: { events: [shellCall(backend, id("again"), `echo ran >> ${markerName}`)] },
        },
        {
          match: { toolResultFor: id("again") },
          response: { events: [{ type: "text", text: "RAN AGAIN" }] },
        },
      ],
    });
    const w = world;
    await w.startDaemon(continueSetting);
    const session = await w.createSession();
    const marker = join(session.workspace, markerName);
    try {
      const turn = await w.send(session.id, "[slow] run the slow command");
      // Admitted (a call the gate never admitted never ran, and its turn carries on by itself).
      await waitUntil(() => w.toolAdmissions(turn.id).length === 1, 120_000, "the call admitted");
      await w.restartAfterReboot(continueSetting);
      expect(existsSync(marker)).toBe(false);
      expect((await status(w)).atStart).toMatchObject({ continued: 0, waitingOnYou: 1 });
      const waiting = await w.turn(turn.id);
      expect(waiting).toMatchObject({ phase: "interrupted", error: { code: "may_have_run" } });
      expect(waiting.error?.message).toContain(`sleep 4; echo ran >> ${markerName}`);
      expect(waiting.cliLostDecision).toBeUndefined();
      // Nothing goes on by itself: no continuation, no request to the model.
      expect((await w.turns(session.id)).some((each) => each.continues === turn.id)).toBe(false);

      const decide = (decision: string) =>
        w.client.request<FlootCliLostDecided>("POST", `/v1/turns/${turn.id}/cli-lost-decision`, { decision });
      const decided = await decide("run_again");
      expect(decided.turn.cliLostDecision).toBe("run_again");
      const done = await w.waitForEnd(decided.continuation!.id, 90_000);
      expect(done.phase, JSON.stringify(done.error)).toBe("completed");
      expect(readFileSync(marker, "utf8")).toBe("ran\n");
      // Decided once: the same answer again changes nothing; another is refused, and survives a restart.
      expect((await decide("run_again")).continuation?.id).toBe(decided.continuation!.id);
      await w.stopDaemon();
      await w.startDaemon(continueSetting);
      await expect(decide("skip")).rejects.toMatchObject({ status: 409 });
      expect((await w.turn(turn.id)).cliLostDecision).toBe("run_again");
    } finally {
      rmSync(marker, { force: true });
    }
  });
});

describe("after a reboot, a turn that only read: claude", () => {
  test("its read has no recorded end, yet it carries on by itself: a read is no effect", async () => {
    world = await FlootWorld.create("claude", {
      steps: [
        {
          match: { lastUserTextIncludes: "[look]" },
          response: {
            events: [{ type: "tool_use", id: "toolu_look", name: "Glob", input: { pattern: "*.txt" } }],
          },
        },
        {
          match: { toolResultFor: "toolu_look" },
          response: { events: [{ type: "text", text: "Nothing to read" }, { type: "stall" }] },
        },
        {
          match: { lastUserTextIncludes: "Every tool call you started had finished" },
          response: { events: [{ type: "text", text: "CARRIED ON" }] },
        },
      ],
    });
    const w = world;
    await w.startDaemon(continueSetting);
    const session = await w.createSession({ allowedTools: ["Bash", "Glob"], permissionMode: "dontAsk" });
    const turn = await w.send(session.id, "[look] look around");
    await w.waitForTurn(turn.id, (t) => t.effects.includes("assistant_text"), "text after the read", 120_000);
    expect(w.toolAdmissions(turn.id)).toEqual([
      expect.objectContaining({ toolCallId: "toolu_look", toolName: "Glob", effectFree: true }),
    ]);
    await w.restartAfterReboot(continueSetting);
    expect((await status(w)).atStart).toMatchObject({ continued: 1, waitingOnYou: 0 });
    const done = await w.waitForEnd((await continuationOf(w, turn)).id, 90_000);
    expect(done.phase, JSON.stringify(done.error)).toBe("completed");
  });
});

describe("after a reboot during a call: claude", () => {
  test("skip goes on without the call; stop ends the turn there; the floot CLI decides too", async () => {
    world = await FlootWorld.create("claude", {
      steps: [
        {
          match: { lastUserTextIncludes: "[slow] one" },
          response: { events: [shellCall("claude", "toolu_slow1", `sleep 4; echo ran >> ${markerName}`)] },
        },
        {
          match: { lastUserTextIncludes: "[slow] two" },
          response: { events: [shellCall("claude", "toolu_slow2", `sleep 4; echo ran >> ${markerName}`)] },
        },
        {
          match: { lastUserTextIncludes: "The user asked you not to run it again" },
          response: { events: [{ type: "text", text: "WENT ON WITHOUT IT" }] },
        },
      ],
    });
    const w = world;
    await w.startDaemon(continueSetting);
    const first = await w.createSession();
    const second = await w.createSession();
    const skipped = await w.send(first.id, "[slow] one");
    const stopped = await w.send(second.id, "[slow] two");
    for (const turn of [skipped, stopped])
      await waitUntil(() => w.toolAdmissions(turn.id).length === 1, 120_000, "the call admitted");
    await w.restartAfterReboot(continueSetting);
    expect((await status(w)).atStart).toMatchObject({ waitingOnYou: 2 });

    const skip = await w.floot("turn", "decide", skipped.id, "skip");
    expect(skip, skip.stderr).toMatchObject({ code: 0 });
    expect(skip.stdout).toMatch(new RegExp(`^turn ${skipped.id}: skip; carried on as turn \\S+\\n$`));
    const continuation = await continuationOf(w, skipped);
    expect((await w.waitForEnd(continuation.id, 90_000)).phase).toBe("completed");
    expect(existsSync(join(first.workspace, markerName))).toBe(false);

    expect(await w.floot("turn", "decide", stopped.id, "stop")).toMatchObject({
      code: 0,
      stdout: `turn ${stopped.id}: stopped\n`,
    });
    expect(await w.turn(stopped.id)).toMatchObject({ phase: "interrupted", cliLostDecision: "stop" });
    expect((await w.turns(second.id)).some((each) => each.continues === stopped.id)).toBe(false);
    const bad = await w.floot("turn", "decide", stopped.id, "later");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("run-again, skip, stop");
  });
});
