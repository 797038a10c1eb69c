import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import {
  findProcessesBySpawnMarker,
  isSameProcess,
  type ProcessIdentity,
} from "@bridgeworks/backend-adapters";
import { type RecordedRequest, type ScriptInput, textReply } from "@bridgeworks/model-double";
import type {
  Backend,
  FlootDaemonStatus,
  SubmitSecretResponse,
  TurnEventEnvelope,
  TurnRecord,
} from "@bridgeworks/protocol";
import { isProcessAlive, waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import {
  bundlePath,
  commandLineOf,
  descendantsOf,
  FlootWorld,
  filesContaining,
  filesUnder,
  shimPath,
} from "./daemon-harness.js";

const backends: Backend[] = ["claude", "codex"];

let world: FlootWorld | undefined;

afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  // Every test's journal, however it was killed, must reopen consistent (no torn write).
  expect(problems).toEqual([]);
});

function toolSelector(backend: Backend): { equals: string } {
  return { equals: backend === "claude" ? "Bash" : "exec_command" };
}

function commandInput(backend: Backend, command: string): Record<string, string> {
  return backend === "claude" ? { command, description: "run it" } : { cmd: command };
}

function bodyText(request: RecordedRequest): string {
  return JSON.stringify(request.body);
}

function contiguous(events: TurnEventEnvelope[]): boolean {
  return events.every((envelope, position) => envelope.index === position);
}

/** A model request that carries the delivered credential's note. */
const provided = (r: { body: unknown }) => JSON.stringify(r.body).includes("provided API_TOKEN");

/** The model asks for API_TOKEN on `[secret]`, and thanks once it was provided. */
function secretSteps(): ScriptInput["steps"] {
  return [
    {
      match: provided,
      repeat: true,
      response: { events: [{ type: "text", text: "THANKS FOR THE TOKEN" }] },
    },
    {
      match: { lastUserTextIncludes: "[secret]" },
      repeat: true,
      response: {
        events: [
          {
            type: "tool_use",
            nameFrom: { endsWith: "requestSecret" },
            input: { name: "API_TOKEN", prompt: "the deploy token" },
          },
        ],
      },
    },
  ];
}

async function setUp(backend: Backend, script: ScriptInput): Promise<FlootWorld> {
  world = await FlootWorld.create(backend, script);
  await world.startDaemon();
  return world;
}

describe.each(backends)("restart/reconnect contract: %s", (backend) => {
  test("1. happy path: conversation id journaled, a second turn resumes it", async () => {
    const w = await setUp(backend, {
      steps: [textReply("[hello]", "HELLO BACK"), textReply("[again]", "AGAIN BACK")],
    });
    const session = await w.createSession();
    const first = await w.send(session.id, "[hello] first turn");
    expect(first.phase).toBe("accepted");
    const done = await w.waitForEnd(first.id);
    expect(done.phase, JSON.stringify(done.error)).toBe("completed");
    const events = await w.events(first.id);
    expect(contiguous(events)).toBe(true);
    expect(events.some((e) => e.event.type === "assistant.text" && e.event.text === "HELLO BACK")).toBe(true);
    const started = events.findIndex((e) => e.event.type === "backend.started");
    const running = events.findIndex((e) => e.event.type === "phase" && e.event.phase === "running");
    expect(done.conversationId).toBeDefined();
    if (backend === "claude") {
      // Picked by the daemon and journaled with `spawning`, before the process existed.
      const spawning = events.findIndex((e) => e.event.type === "phase" && e.event.phase === "spawning");
      expect(spawning).toBeGreaterThan(-1);
      expect(spawning).toBeLessThan(running);
      const header = w.double.requests.find((r) => r.api === "anthropic")?.headers[
        "x-claude-code-session-id"
      ];
      expect(header).toBe(done.conversationId);
    } else {
      // The thread id is the first thing the CLI said: no backend event precedes it.
      const firstBackendEvent = events.findIndex(
        (e, i) => i > running && e.event.type !== "phase" && e.event.type !== "terminal",
      );
      expect(firstBackendEvent).toBe(started);
    }
    const second = await w.send(session.id, "[again] second turn");
    const secondDone = await w.waitForEnd(second.id);
    expect(secondDone.phase, JSON.stringify(secondDone.error)).toBe("completed");
    expect(secondDone.conversationId).toBe(done.conversationId);
    const resumed = w.double.requests.find((r) => bodyText(r).includes("[again]"));
    expect(bodyText(resumed!)).toContain("[hello] first turn");
  });

  test("2. a follower that drops mid-turn reattaches by identity and sees the identical sequence", async () => {
    const w = await setUp(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[slow]" },
          response: {
            events: [
              { type: "text", text: "part one" },
              { type: "delay", ms: 1_500 },
            ],
          },
        },
      ],
    });
    const session = await w.createSession();
    const turn = await w.send(session.id, "[slow] stream something");
    const seenBeforeDrop: TurnEventEnvelope[] = [];
    const abort = new AbortController();
    await w.client
      .follow(
        turn.id,
        0,
        (envelope) => {
          seenBeforeDrop.push(envelope);
          if (seenBeforeDrop.length >= 3) abort.abort();
        },
        abort.signal,
      )
      .catch(() => undefined);
    expect(seenBeforeDrop.length).toBeGreaterThanOrEqual(3);
    const current = await w.client.request<TurnRecord>("GET", `/v1/sessions/${session.id}/current-turn`);
    expect(current.id).toBe(turn.id);
    const reattached: TurnEventEnvelope[] = [];
    await w.client.follow(current.id, 0, (envelope) => reattached.push(envelope));
    const journaled = await w.events(turn.id);
    expect(reattached).toEqual(journaled);
    expect(contiguous(reattached)).toBe(true);
    expect(reattached.slice(0, seenBeforeDrop.length)).toEqual(seenBeforeDrop);
    expect(reattached.at(-1)?.event).toMatchObject({ type: "terminal", outcome: "completed" });
  });

  test("3a. restart after accepted, before spawn: the turn runs once after restart", async () => {
    world = await FlootWorld.create(backend, {
      steps: [textReply("[once]", "ONCE")],
    });
    const w = world;
    // The daemon is held (blocked) the moment the turn starts: accepted, nothing spawned.
    await w.startDaemon({}, { "turn:starting": { action: "hold" } });
    const session = await w.createSession();
    const turn = await w.send(session.id, "[once] run me");
    await waitUntil(() => w.faultHits().length === 1, 30_000, "the daemon held at turn:starting");
    expect(w.readTurnRow(turn.id)).toMatchObject({ phase: "accepted", pid: null, spawnMarker: null });
    await w.restartAfterKill();
    const done = await w.waitForEnd(turn.id);
    expect(done.phase).toBe("completed");
    expect(await w.turns(session.id)).toHaveLength(1);
    expect(w.requestsWith("[once]")).toBe(1);
  });

  test("3b. restart during thinking: the leftover CLI is fenced, the turn replays once and completes", async () => {
    const w = await setUp(backend, {
      steps: [
        { match: { lastUserTextIncludes: "[think]" }, response: { events: [{ type: "stall" }] } },
        textReply("[think]", "THOUGHT"),
      ],
    });
    const session = await w.createSession();
    const turn = await w.send(session.id, "[think] ponder");
    await w.double.waitForRequest((r) => bodyText(r).includes("[think]"), { timeoutMs: 30_000 });
    const stalled = await w.waitForTurn(turn.id, (t) => t.phase === "running" && !!t.process, "running");
    expect(isSameProcess(stalled.process!)).toBe(true);
    // The keeper killed too: its CLI left running, orphaned; recovery is the path.
    await w.restartAfterKeeperKill();
    // Fencing happens before the new daemon is ready: the old CLI is gone before any replay spawns.
    expect(isSameProcess(stalled.process!)).toBe(false);
    const old = await w.waitForEnd(turn.id);
    expect(old.phase).toBe("interrupted");
    const turns = await w.turns(session.id);
    expect(turns).toHaveLength(2);
    const replay = turns.find((t) => t.replayOf === turn.id)!;
    expect(replay.attempt).toBe(2);
    const replayed = await w.waitForEnd(replay.id);
    expect(replayed.phase, JSON.stringify(replayed.error)).toBe("completed");
    expect(replayed.process?.pid).not.toBe(stalled.process?.pid);
    expect(replayed.conversationId).toBe(old.conversationId);
    expect(w.requestsWith("[think]")).toBe(2);
  });

  test("3c. restart after the spawn, before its pid is journaled: nothing carrying the turn's marker survives, the turn replays once", async () => {
    world = await FlootWorld.create(backend, {
      steps: [textReply("[window]", "WINDOW CLOSED", { repeat: true })],
    });
    const w = world;
    // Held (blocked) right after the spawn, before the pid is journaled.
    await w.startDaemon({}, { "turn:spawned": { action: "hold" } });
    const session = await w.createSession();
    const turn = await w.send(session.id, "[window] run me");
    // The daemon is blocked now; the journal (read beside it) shows the turn spawning with no pid.
    let marker = "";
    await waitUntil(
      () => {
        const row = w.readTurnRow(turn.id);
        marker = row?.spawnMarker ?? "";
        return row?.phase === "spawning" && row.pid === null && marker !== "";
      },
      30_000,
      "turn spawning with a marker",
    );
    let stranded: ProcessIdentity[] = [];
    await waitUntil(
      () => {
        stranded = findProcessesBySpawnMarker([marker]).get(marker) ?? [];
        return stranded.length > 0;
      },
      30_000,
      "the marked CLI",
    );
    // Still running unrecorded a moment later (its MCP bridge is the blocked daemon).
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const identity of stranded) expect(isSameProcess(identity)).toBe(true);
    expect(w.readTurnRow(turn.id)).toMatchObject({ phase: "spawning", pid: null });

    // The unrecorded CLI may also die on its own once it writes to its dead daemon's pipe; either way
    // nothing carrying the marker is left by the time the new daemon is ready. (recovery.test.ts
    // proves the marker fencing itself on processes that would live on.)
    await w.restartAfterKill();
    for (const identity of stranded) expect(isSameProcess(identity)).toBe(false);
    expect(findProcessesBySpawnMarker([marker]).get(marker)).toEqual([]);
    const turns = await w.turns(session.id);
    expect(turns).toHaveLength(2);
    const replay = turns.find((t) => t.replayOf === turn.id)!;
    const replayed = await w.waitForEnd(replay.id);
    expect(replayed.phase, JSON.stringify(replayed.error)).toBe("completed");
    expect(replayed.spawnMarker).not.toBe(marker);
    expect(replayed.process?.pid).not.toBe(stranded[0]?.pid);
    expect((await w.events(replay.id)).some((e) => JSON.stringify(e.event).includes("WINDOW CLOSED"))).toBe(
      true,
    );
  });

  test("4. restart after assistant text: interrupted, events kept, no model request until retry", async () => {
    const w = await setUp(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[text]" },
          response: { events: [{ type: "text", text: "PARTIAL ANSWER" }, { type: "stall" }] },
        },
        textReply("[text]", "RETRIED"),
      ],
    });
    const session = await w.createSession();
    const turn = await w.send(session.id, "[text] answer me");
    // Claude streams deltas (the block never ended); Codex reports the whole message.
    const shownText = async () =>
      (await w.events(turn.id))
        .map(({ event }) =>
          event.type === "assistant.delta" || event.type === "assistant.text" ? event.text : "",
        )
        .join("");
    await waitUntil(
      async () => (await shownText()).includes("PARTIAL ANSWER"),
      30_000,
      "assistant text journaled",
    );
    // The keeper killed too (its CLI orphaned, then fenced): recovery is the path.
    await w.restartAfterKeeperKill();
    const interrupted = await w.waitForEnd(turn.id);
    expect(interrupted.phase).toBe("interrupted");
    expect(interrupted.effects).toContain("assistant_text");
    expect(await shownText()).toContain("PARTIAL ANSWER");
    const requestsBefore = w.requestsWith("[text]");
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(w.requestsWith("[text]")).toBe(requestsBefore);
    expect(await w.turns(session.id)).toHaveLength(1);
    const retry = await w.client.request<TurnRecord>("POST", `/v1/turns/${turn.id}/retry`);
    expect(retry.retryOf).toBe(turn.id);
    const retried = await w.waitForEnd(retry.id);
    expect(retried.phase, JSON.stringify(retried.error)).toBe("completed");
    expect(retried.conversationId).toBe(interrupted.conversationId);
  });

  test("5. restart after a tool call began: interrupted, the tool ran exactly once", async () => {
    // In the workspace, where the session's sandbox lets a command write.
    const markerName = "floot-marker.txt";
    const w = await setUp(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[tool]" },
          response: {
            events: [
              {
                type: "tool_use",
                id: backend === "claude" ? "toolu_marker" : "call_marker",
                nameFrom: toolSelector(backend),
                input: commandInput(backend, `echo ran >> ${markerName}; sleep 5`),
              },
            ],
          },
        },
        { repeat: true, response: { events: [{ type: "text", text: "after the tool" }] } },
      ],
    });
    const session = await w.createSession();
    const marker = join(session.workspace, markerName);
    try {
      const turn = await w.send(session.id, "[tool] write the marker");
      await w.waitForTurn(turn.id, (t) => t.effects.includes("tool_started"), "tool started");
      await waitUntil(() => existsSync(marker), 30_000, "marker written");
      // The keeper killed too (its CLI orphaned, then fenced): recovery is the path.
      await w.restartAfterKeeperKill();
      const interrupted = await w.waitForEnd(turn.id);
      expect(interrupted.phase).toBe("interrupted");
      // Recorded before the tool ran: the gate's admission of that very call.
      const callId = backend === "claude" ? "toolu_marker" : "call_marker";
      expect(
        (await w.events(turn.id)).some((e) => e.event.type === "tool.admitted" && e.event.toolId === callId),
      ).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await w.turns(session.id)).toHaveLength(1);
      expect(readFileSync(marker, "utf8")).toBe("ran\n");
    } finally {
      rmSync(marker, { force: true });
    }
  });

  test("6+7. requestSecret across a restart: tool error within seconds, same request again, fresh credential, no bytes at rest", async () => {
    const secret = `s3cr3t-${Math.random().toString(36).slice(2)}-${Date.now()}`;
    const w = await setUp(backend, {
      steps: [
        ...secretSteps(),
        { repeat: true, response: { events: [{ type: "text", text: "the bridge went away" }] } },
      ],
    });
    const session = await w.createSession();
    const turn = await w.send(session.id, "[secret] deploy it");
    await w.waitForTurn(turn.id, (t) => t.phase === "awaiting_secret", "awaiting_secret");
    const [pending] = await w.secretRequests();
    expect(pending).toMatchObject({ name: "API_TOKEN", status: "pending", turnId: turn.id });
    const firstGeneration = w.daemon!.file.generation;

    // Point 7, the keeper killed with the daemon (so no daemon can adopt the turn): once the daemon
    // is back, within seconds the CLI either tells the model the tool failed or is ended: it never
    // waits out a tool timeout on a dead bridge.
    const requestsBefore = w.double.requests.length;
    const cli = (await w.turn(turn.id)).process!;
    await w.killDaemonAndKeeper();
    await w.startDaemon();
    const startedAt = Date.now();
    let followUp: RecordedRequest | undefined;
    await waitUntil(
      () => {
        followUp = w.double.requests.find((r) => r.index >= requestsBefore);
        return followUp !== undefined || !isSameProcess(cli);
      },
      10_000,
      "the CLI stops waiting on the dead bridge",
    );
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    if (followUp) expect(bodyText(followUp)).not.toContain("provided API_TOKEN");
    expect(w.daemon!.file.generation).toBe(firstGeneration + 1);
    expect((await w.turn(turn.id)).phase).toBe("interrupted");
    const again = await w.secretRequests();
    expect(again.map((r) => [r.id, r.status])).toEqual([[pending!.id, "orphaned"]]);

    // Submitted through the CLI, the value on stdin (never argv).
    const submit = spawn(
      process.execPath,
      [bundlePath, "secret", "submit", pending!.id, "--state", w.stateDir, "--json"],
      {
        env: w.env.env,
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let out = "";
    submit.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    submit.stdin.end(`${secret}\n`);
    const code = await new Promise<number | null>((resolve) => submit.on("exit", resolve));
    expect(code, out).toBe(0);
    const answer = JSON.parse(out) as SubmitSecretResponse;
    expect(answer.deliveredTo).toBe("retry");
    const retried = await w.waitForEnd(answer.retryTurnId!);
    expect(retried.phase, JSON.stringify(retried.error)).toBe("completed");
    const delivery = w.double.requests.find(provided)!;
    const credentialPath = /file (\S+) \(readable/.exec(bodyText(delivery))?.[1];
    expect(credentialPath).toMatch(/cred-/);
    expect(bodyText(delivery)).not.toContain(secret);
    // The credential file lived only as long as its turn.
    expect(filesUnder(w.runtimeDir).filter((path) => path.includes("cred-"))).toEqual([]);
    expect(await w.secretRequests()).toEqual([]);

    // No byte of the secret at rest: state dir (journal, WAL, everything) and the backends' own files.
    expect(filesContaining([w.stateDir, w.env.home], secret)).toEqual([]);
    const daemonLog = w.daemon!.process.stderr();
    expect(daemonLog).not.toContain(secret);
  });

  test.each(["SIGTERM", "SIGKILL"] as const)(
    "6b. requestSecret across a %s restart, the CLI kept: the same request, submitted once, completes the turn",
    async (how) => {
      const secret = `s3cr3t-${Math.random().toString(36).slice(2)}-${Date.now()}`;
      const w = await setUp(backend, {
        steps: [...secretSteps()],
      });
      const session = await w.createSession();
      const turn = await w.send(session.id, "[secret] deploy it");
      await w.waitForTurn(turn.id, (t) => t.phase === "awaiting_secret", "awaiting_secret");
      const [pending] = await w.secretRequests();
      if (how === "SIGTERM") await w.stopDaemon();
      else await w.killDaemon();
      await w.startDaemon();
      expect((await w.turn(turn.id)).phase).toBe("awaiting_secret");
      // The shim asked again, by the same call: still the one request, pending.
      await waitUntil(
        async () => (await w.secretRequests()).some((r) => r.id === pending!.id && r.status === "pending"),
        30_000,
        "the request pending again",
      );
      expect((await w.secretRequests()).map((r) => r.id)).toEqual([pending!.id]);
      const answer = await w.client.request<SubmitSecretResponse>(
        "POST",
        `/v1/secret-requests/${pending!.id}/submit`,
        { value: secret },
      );
      expect(answer.deliveredTo).toBe("call");
      const done = await w.waitForEnd(turn.id, 90_000);
      expect(done.phase, JSON.stringify(done.error)).toBe("completed");
      expect(w.double.requests.filter(provided).length).toBeGreaterThanOrEqual(1);
      expect(await w.turns(session.id)).toHaveLength(1);
      expect(filesContaining([w.stateDir, w.env.home], secret)).toEqual([]);
    },
  );

  test("7. a bridge killed during a call gives the CLI a tool error within seconds", async () => {
    const w = await setUp(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[bridge]" },
          response: {
            events: [
              {
                type: "tool_use",
                nameFrom: { endsWith: "requestSecret" },
                input: { name: "K", prompt: "p" },
              },
            ],
          },
        },
        { repeat: true, response: { events: [{ type: "text", text: "CARRIED ON WITHOUT IT" }] } },
      ],
    });
    const session = await w.createSession();
    const turn = await w.send(session.id, "[bridge] need a key");
    const waiting = await w.waitForTurn(turn.id, (t) => t.phase === "awaiting_secret", "awaiting_secret");
    // The shim is `node <shim.mjs>`; the CLI's own argv names the shim too, so match argv[1] exactly.
    const shims = descendantsOf(waiting.process!.pid).filter((pid) => commandLineOf(pid)[1] === shimPath);
    expect(shims.length).toBeGreaterThan(0);
    const requestsBefore = w.double.requests.length;
    const killedAt = Date.now();
    for (const pid of shims) process.kill(pid, "SIGKILL");
    const followUp = await w.double.waitForRequest((r) => r.index >= requestsBefore, { timeoutMs: 30_000 });
    expect(followUp.receivedAt - killedAt).toBeLessThan(10_000);
    const done = await w.waitForEnd(turn.id, 30_000);
    expect(done.phase, JSON.stringify(done.error)).toBe("completed");
    const events = await w.events(turn.id);
    expect(events.some((e) => e.event.type === "tool.completed" && e.event.isError)).toBe(true);
    expect(events.some((e) => e.event.type === "secret.resolved" && e.event.status === "cancelled")).toBe(
      true,
    );
  });

  test("7. generations: bumped at every start; a shim on an older generation exits non-zero within 2 s", async () => {
    const w = await setUp(backend, { steps: [] });
    const first = w.daemon!.file.generation;
    const oldSocket = join(w.stateDir, "bridges", `g${first}`, "mcp.sock");
    expect(existsSync(oldSocket)).toBe(true);
    await w.restartAfterKill();
    const second = w.daemon!.file.generation;
    expect(second).toBe(first + 1);
    const status = await w.client.request<FlootDaemonStatus>("GET", "/v1/status");
    expect(status.generation).toBe(second);
    expect(existsSync(join(w.stateDir, "bridges", `g${first}`))).toBe(false);
    const startedAt = Date.now();
    const shim = w.env.spawn(process.execPath, [shimPath], {
      env: { FLOOT_MCP_SOCKET: oldSocket, FLOOT_MCP_TOKEN: "0".repeat(64) },
      keepStdinOpen: true,
    });
    const exit = await shim.exited;
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    expect(exit.code).not.toBe(0);
  });

  test("8. two daemons started at once: exactly one runs, the other exits with its own code", async () => {
    world = await FlootWorld.create(backend, { steps: [] });
    const w = world;
    const a = w.spawnDaemon();
    const b = w.spawnDaemon();
    const loser = await Promise.race([a.exited.then(() => a), b.exited.then(() => b)]);
    const winner = loser === a ? b : a;
    expect((await loser.exited).code).toBe(75);
    expect(loser.stderr()).toContain("holds the state dir lock");
    expect(loser.stderr()).not.toContain("daemon ready");
    let winnerExit: unknown;
    void winner.exited.then((exit) => {
      winnerExit = exit;
    });
    await waitUntil(
      () => {
        if (winnerExit) throw new Error(`both daemons exited; the winner with ${JSON.stringify(winnerExit)}`);
        return w.readDaemonFile()?.pid === winner.pid;
      },
      30_000,
      "winner ready",
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(w.readDaemonFile()?.pid).toBe(winner.pid);
    process.kill(winner.pid, "SIGTERM");
    expect((await winner.exited).code).toBe(0);
  });

  test("9. model error, missing conversation and cancel end failed/cancelled, are never replayed; retry is idempotent", async () => {
    const w = await setUp(backend, {
      steps: [
        {
          match: { lastUserTextIncludes: "[fail]" },
          repeat: true,
          response: { error: { status: 400, message: "scripted failure" } },
        },
        textReply("[hello]", "HI"),
        { match: { lastUserTextIncludes: "[hang]" }, response: { events: [{ type: "stall" }] } },
      ],
    });
    // Model error.
    const failing = await w.createSession();
    const failed = await w.waitForEnd((await w.send(failing.id, "[fail] break")).id);
    expect(failed.phase).toBe("failed");
    expect(failed.error?.message).toContain("scripted failure");

    // Missing backend conversation.
    const lost = await w.createSession();
    const ok = await w.waitForEnd((await w.send(lost.id, "[hello] hi")).id);
    expect(ok.phase).toBe("completed");
    const transcripts = filesUnder(
      backend === "claude" ? join(w.env.claudeConfigDir, "projects") : join(w.env.codexHome, "sessions"),
    ).filter((path) => path.includes(ok.conversationId!));
    expect(transcripts.length).toBeGreaterThan(0);
    for (const path of transcripts) rmSync(path);
    const missing = await w.waitForEnd((await w.send(lost.id, "[hello] again")).id);
    expect(missing.phase).toBe("failed");
    expect(missing.error?.code).toBe("backend_conversation_missing");

    // Cancel.
    const hanging = await w.createSession();
    const hang = await w.send(hanging.id, "[hang] wait");
    const running = await w.waitForTurn(hang.id, (t) => t.phase === "running" && !!t.process, "running");
    const cancelled = await w.client.request<TurnRecord>("POST", `/v1/turns/${hang.id}/cancel`);
    expect(cancelled.phase).toBe("cancelled");
    expect(isSameProcess(running.process!)).toBe(false);

    // None of them is replayed by a restart.
    await w.restartAfterKill();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await w.turns(failing.id)).map((t) => t.phase)).toEqual(["failed"]);
    expect((await w.turns(lost.id)).map((t) => t.phase)).toEqual(["completed", "failed"]);
    expect((await w.turns(hanging.id)).map((t) => t.phase)).toEqual(["cancelled"]);

    // A double retry of one turn is one retry.
    const [r1, r2] = await Promise.all([
      w.client.request<TurnRecord>("POST", `/v1/turns/${failed.id}/retry`),
      w.client.request<TurnRecord>("POST", `/v1/turns/${failed.id}/retry`),
    ]);
    expect(r1.id).toBe(r2.id);
    await w.waitForEnd(r1.id);
    expect(await w.turns(failing.id)).toHaveLength(2);
  });
});

test("a SIGTERM the moment daemon.json is written (a restart right after a start) stops it cleanly: exit 0, no daemon.json left, its idle keeper ended", async () => {
  world = await FlootWorld.create("claude", { steps: [] });
  const w = world;
  // Held right after daemon.json is written, before the start returns: a client already takes it for ready.
  const daemon = await w.startDaemon({}, { "daemon:announced": { action: "hold", ms: 3_000 } });
  const keeper = await w.keeperPid();
  expect(keeper).toBeGreaterThan(1);
  process.kill(daemon.process.pid, "SIGTERM");
  const exit = await daemon.process.exited;
  w.daemon = undefined;
  expect(exit, daemon.process.stderr()).toMatchObject({ code: 0, signal: null });
  expect(daemon.process.stderr()).toContain('"message":"stopping"');
  expect(w.readDaemonFile()).toBeUndefined();
  // A keeper that keeps nothing ends with a clean stop (it would linger 30 s after a daemon cut short).
  await waitUntil(() => !isProcessAlive(keeper!), 10_000, "the idle keeper ended with the daemon's stop");
});
