import Database from "better-sqlite3";
import { describe, expect, test } from "vitest";
import { JournalError } from "../src/errors.js";
import { createTestJournal, eventTypes, runningTurn } from "./helpers.js";

describe("sessions", () => {
  test("a created session is idle, listed and survives a reopen", () => {
    const { journal, reopen } = createTestJournal();
    const session = journal.createSession({ id: "session-a", backend: "codex" });
    expect(session).toEqual({
      id: "session-a",
      backend: "codex",
      status: "idle",
      queuedTurns: 0,
      createdAt: "2026-11-30T12:00:00.000Z",
    });
    const reopened = reopen();
    expect(reopened.listSessions()).toEqual([session]);
    expect(reopened.getSession("nope")).toBeUndefined();
  });

  test("refuses a duplicate id and a bad draft, naming the field", () => {
    const { journal } = createTestJournal();
    journal.createSession({ id: "dup", backend: "claude" });
    expect(() => journal.createSession({ id: "dup", backend: "claude" })).toThrow(
      expect.objectContaining({ code: "session_exists" }),
    );
    expect(() => journal.createSession({ backend: "gemini" as "claude" })).toThrow(/session\.backend/);
  });

  test("status follows the active turn: provisioning, running, idle", () => {
    const { journal } = createTestJournal();
    const { id } = journal.createSession({ backend: "claude" });
    const turn = journal.submitTurn(id, { prompt: "hello" });
    expect(journal.getSession(id)).toMatchObject({ status: "provisioning", activeTurnId: turn.id });
    journal.transition(turn.id, { phase: "spawning" });
    expect(journal.getSession(id)?.status).toBe("provisioning");
    journal.transition(turn.id, { phase: "running" });
    expect(journal.getSession(id)?.status).toBe("running");
    journal.transition(turn.id, { phase: "completed" });
    expect(journal.getSession(id)).not.toHaveProperty("activeTurnId");
    expect(journal.getSession(id)?.status).toBe("idle");
  });

  test("a stopped session cancels its queue and takes no new turn", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const queued = journal.submitTurn(turn.sessionId, { prompt: "later" });
    expect(() => journal.stopSession(turn.sessionId)).toThrow(
      expect.objectContaining({ code: "session_busy" }),
    );
    journal.transition(turn.id, { phase: "completed" });
    const stopped = journal.stopSession(turn.sessionId);
    expect(stopped).toMatchObject({ status: "stopped", queuedTurns: 0, stoppedAt: expect.any(String) });
    expect(journal.getTurn(queued.id)).toMatchObject({
      phase: "cancelled",
      error: { code: "session_stopped" },
    });
    expect(() => journal.submitTurn(turn.sessionId, { prompt: "more" })).toThrow(
      expect.objectContaining({ code: "session_stopped" }),
    );
  });
});

describe("turns", () => {
  test("a submitted turn is recorded accepted before anything runs, with its first event", () => {
    const { journal } = createTestJournal();
    journal.bumpGeneration();
    const { id } = journal.createSession({ backend: "claude" });
    const turn = journal.submitTurn(id, { prompt: "hello" });
    expect(turn).toEqual({
      id: expect.any(String),
      sessionId: id,
      seq: 1,
      backend: "claude",
      input: { prompt: "hello" },
      phase: "accepted",
      attempt: 1,
      effects: [],
      bridgeGeneration: 1,
      eventCount: 1,
      createdAt: "2026-11-30T12:00:00.000Z",
      updatedAt: "2026-11-30T12:00:00.000Z",
    });
    expect(journal.readEvents(turn.id)).toEqual([
      {
        turnId: turn.id,
        index: 0,
        at: "2026-11-30T12:00:00.000Z",
        event: { type: "phase", phase: "accepted" },
      },
    ]);
  });

  test("refuses an empty prompt and an unknown session", () => {
    const { journal } = createTestJournal();
    const { id } = journal.createSession({ backend: "claude" });
    expect(() => journal.submitTurn(id, { prompt: "" })).toThrow(/input\.prompt: prompt must not be empty/);
    expect(() => journal.submitTurn("missing", { prompt: "x" })).toThrow(
      expect.objectContaining({ code: "session_not_found" }),
    );
  });

  test("one active turn per session: later turns queue and are promoted in seq order", () => {
    const { journal } = createTestJournal();
    const { id } = journal.createSession({ backend: "codex" });
    const first = journal.submitTurn(id, { prompt: "one" });
    const second = journal.submitTurn(id, { prompt: "two" });
    const third = journal.submitTurn(id, { prompt: "three" });
    expect([first.phase, second.phase, third.phase]).toEqual(["accepted", "queued", "queued"]);
    expect(journal.getSession(id)?.queuedTurns).toBe(2);
    expect(journal.promoteNextTurn(id)).toBeUndefined();

    journal.transition(first.id, { phase: "failed", error: { code: "spawn_failed", message: "ENOENT" } });
    expect(journal.promoteNextTurn(id)).toMatchObject({ id: second.id, phase: "accepted" });
    expect(journal.promoteNextTurn(id)).toBeUndefined();
    expect(eventTypes(journal, second.id)).toEqual(["phase", "phase"]);
    journal.transition(second.id, { phase: "cancelled" });
    expect(journal.promoteNextTurn(id)?.id).toBe(third.id);
    expect(journal.listTurns(id).map((turn) => [turn.seq, turn.phase])).toEqual([
      [1, "failed"],
      [2, "cancelled"],
      [3, "accepted"],
    ]);
  });

  test("a new turn never overtakes the queue, even while no turn is active", () => {
    const { journal } = createTestJournal();
    const { id } = journal.createSession({ backend: "claude" });
    const first = journal.submitTurn(id, { prompt: "one" });
    const second = journal.submitTurn(id, { prompt: "two" });
    journal.transition(first.id, { phase: "cancelled" });
    expect(journal.submitTurn(id, { prompt: "three" }).phase).toBe("queued");
    expect(journal.promoteNextTurn(id)?.id).toBe(second.id);
  });

  test("the store itself refuses a second active turn in a session", () => {
    const { journal, path } = createTestJournal();
    const { id } = journal.createSession({ backend: "claude" });
    journal.submitTurn(id, { prompt: "one" });
    const queued = journal.submitTurn(id, { prompt: "two" });
    const db = new Database(path);
    try {
      expect(() => db.prepare("UPDATE turns SET phase = 'running' WHERE id = ?").run(queued.id)).toThrow(
        /UNIQUE constraint failed/,
      );
    } finally {
      db.close();
    }
  });

  test("getCurrentTurn is the active turn, else the latest", () => {
    const { journal } = createTestJournal();
    const { id } = journal.createSession({ backend: "claude" });
    expect(journal.getCurrentTurn(id)).toBeUndefined();
    const first = journal.submitTurn(id, { prompt: "one" });
    const second = journal.submitTurn(id, { prompt: "two" });
    expect(journal.getCurrentTurn(id)?.id).toBe(first.id);
    journal.transition(first.id, { phase: "cancelled" });
    expect(journal.getCurrentTurn(id)?.id).toBe(second.id);
    journal.promoteNextTurn(id);
    journal.transition(second.id, { phase: "spawning" });
    journal.transition(second.id, { phase: "running" });
    journal.transition(second.id, { phase: "completed" });
    expect(journal.getCurrentTurn(id)).toMatchObject({ id: second.id, phase: "completed" });
  });

  test("phases move only forward; a terminal phase is final", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    expect(() => journal.transition(turn.id, { phase: "spawning" })).toThrow(
      "turn id-000002 is running; cannot move to spawning (it can move to completed, failed, cancelled, interrupted)",
    );
    journal.transition(turn.id, { phase: "completed" });
    const error = (() => {
      try {
        journal.transition(turn.id, { phase: "failed" });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(JournalError);
    expect(error).toMatchObject({
      code: "invalid_transition",
      message: expect.stringContaining("it has ended"),
    });
    expect(() => journal.transition("missing", { phase: "failed" })).toThrow(
      expect.objectContaining({ code: "turn_not_found" }),
    );
  });

  test("running records the CLI process, spawning the bridge generation and the conversation id", () => {
    const { journal } = createTestJournal();
    const { id } = journal.createSession({ backend: "claude" });
    const turn = journal.submitTurn(id, { prompt: "hi" });
    journal.bumpGeneration();
    journal.bumpGeneration();
    journal.transition(turn.id, { phase: "spawning", conversationId: "3f1c8a52-claude-session" });
    const running = journal.transition(turn.id, {
      phase: "running",
      process: { pid: 77, startTime: "9001" },
    });
    expect(running).toMatchObject({
      bridgeGeneration: 2,
      conversationId: "3f1c8a52-claude-session",
      process: { pid: 77, startTime: "9001" },
    });
    expect(journal.getSession(id)?.conversationId).toBe("3f1c8a52-claude-session");
    expect(() =>
      journal.transition(turn.id, { phase: "completed", process: { pid: 0, startTime: "" } }),
    ).toThrow(/change\.process\.pid.*change\.process\.startTime/);
  });

  test("a conversation is established by another completed turn of the session in it, nothing else", () => {
    const { journal } = createTestJournal();
    const { id } = journal.createSession({ backend: "claude" });
    const run = (conversationId: string, end: "completed" | "failed") => {
      const turn = journal.submitTurn(id, { prompt: "hi" });
      journal.transition(turn.id, { phase: "spawning", conversationId });
      journal.transition(turn.id, { phase: "running", process: { pid: 77, startTime: "9001" } });
      return journal.transition(turn.id, { phase: end });
    };
    const failed = run("conversation-a", "failed");
    expect(journal.conversationEstablished(id, "conversation-a", "another-turn")).toBe(false);
    const completed = run("conversation-a", "completed");
    expect(journal.conversationEstablished(id, "conversation-a", "another-turn")).toBe(true);
    // A turn does not establish its own conversation, nor one it was not in.
    expect(journal.conversationEstablished(id, "conversation-a", completed.id)).toBe(false);
    expect(journal.conversationEstablished(id, "conversation-b", failed.id)).toBe(false);
    const other = journal.createSession({ backend: "claude" });
    expect(journal.conversationEstablished(other.id, "conversation-a", "another-turn")).toBe(false);
  });

  test("the spawn marker is journaled with spawning, kept through the turn and after a reopen", () => {
    const { journal, reopen } = createTestJournal();
    const { id } = journal.createSession({ backend: "codex" });
    const turn = journal.submitTurn(id, { prompt: "hi" });
    const spawnMarker = "0123456789abcdef0123456789abcdef";
    const spawning = journal.transition(turn.id, { phase: "spawning", spawnMarker });
    expect(spawning.spawnMarker).toBe(spawnMarker);
    journal.transition(turn.id, { phase: "running", process: { pid: 77, startTime: "9001" } });
    expect(() => journal.transition(turn.id, { phase: "completed", spawnMarker })).toThrow(
      "change.spawnMarker: spawnMarker is journaled with the spawning phase only",
    );
    const reopened = reopen();
    expect(reopened.getTurn(turn.id)).toMatchObject({
      phase: "running",
      spawnMarker,
      process: { pid: 77, startTime: "9001" },
    });
    expect(reopened.listNonTerminalTurns().map((unfinished) => unfinished.spawnMarker)).toEqual([
      spawnMarker,
    ]);
    expect(reopened.transition(turn.id, { phase: "completed" }).spawnMarker).toBe(spawnMarker);
  });

  test("a terminal phase writes a terminal event carrying the outcome and error", () => {
    const { journal, clock } = createTestJournal();
    const turn = runningTurn(journal);
    clock.advance(1500);
    const failed = journal.transition(turn.id, {
      phase: "failed",
      cause: { type: "error", code: "api_error", message: "API Error: 400 scripted failure" },
      error: { code: "api_error", message: "API Error: 400 scripted failure" },
    });
    expect(failed).toMatchObject({
      phase: "failed",
      error: { code: "api_error" },
      endedAt: "2026-11-30T12:00:01.500Z",
    });
    expect(journal.readEvents(turn.id, failed.eventCount - 2).map((envelope) => envelope.event)).toEqual([
      { type: "error", code: "api_error", message: "API Error: 400 scripted failure" },
      {
        type: "terminal",
        outcome: "failed",
        error: { code: "api_error", message: "API Error: 400 scripted failure" },
      },
    ]);
  });
});
