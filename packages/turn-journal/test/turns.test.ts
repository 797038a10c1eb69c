import Database from "better-sqlite3";
import { describe, expect, test } from "vitest";
import { JournalError } from "../src/errors.js";
import { createTestJournal, eventTypes, runningTurn } from "./helpers.js";

describe("sessions", () => {
  test("a created session is idle, listed and survives a reopen", () => {
    const { journal, reopen } = createTestJournal();
    const session = journal.sessions.createSession({ id: "session-a", backend: "codex" });
    expect(session).toEqual({
      id: "session-a",
      backend: "codex",
      status: "idle",
      queuedTurns: 0,
      createdAt: "2026-11-30T12:00:00.000Z",
    });
    const reopened = reopen();
    expect(reopened.sessions.listSessions()).toEqual([session]);
    expect(reopened.sessions.getSession("nope")).toBeUndefined();
  });

  test("refuses a duplicate id and a bad draft, naming the field", () => {
    const { journal } = createTestJournal();
    journal.sessions.createSession({ id: "dup", backend: "claude" });
    expect(() => journal.sessions.createSession({ id: "dup", backend: "claude" })).toThrow(
      expect.objectContaining({ code: "session_exists" }),
    );
    expect(() => journal.sessions.createSession({ backend: "gemini" as "claude" })).toThrow(
      /session\.backend/,
    );
  });

  test("status follows the active turn: provisioning, running, idle", () => {
    const { journal } = createTestJournal();
    const { id } = journal.sessions.createSession({ backend: "claude" });
    const turn = journal.turns.submitTurn(id, { prompt: "hello" });
    expect(journal.sessions.getSession(id)).toMatchObject({ status: "provisioning", activeTurnId: turn.id });
    journal.turns.transition(turn.id, { phase: "spawning" });
    expect(journal.sessions.getSession(id)?.status).toBe("provisioning");
    journal.turns.transition(turn.id, { phase: "running" });
    expect(journal.sessions.getSession(id)?.status).toBe("running");
    journal.turns.transition(turn.id, { phase: "completed" });
    expect(journal.sessions.getSession(id)).not.toHaveProperty("activeTurnId");
    expect(journal.sessions.getSession(id)?.status).toBe("idle");
  });

  test("a stopped session cancels its queue and takes no new turn", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const queued = journal.turns.submitTurn(turn.sessionId, { prompt: "later" });
    expect(() => journal.sessions.stopSession(turn.sessionId)).toThrow(
      expect.objectContaining({ code: "session_busy" }),
    );
    journal.turns.transition(turn.id, { phase: "completed" });
    const stopped = journal.sessions.stopSession(turn.sessionId);
    expect(stopped).toMatchObject({ status: "stopped", queuedTurns: 0, stoppedAt: expect.any(String) });
    expect(journal.turns.getTurn(queued.id)).toMatchObject({
      phase: "cancelled",
      error: { code: "session_stopped" },
    });
    expect(() => journal.turns.submitTurn(turn.sessionId, { prompt: "more" })).toThrow(
      expect.objectContaining({ code: "session_stopped" }),
    );
  });
});

describe("turns", () => {
  test("a submitted turn is recorded accepted before anything runs, with its first event", () => {
    const { journal } = createTestJournal();
    journal.maintenance.bumpGeneration();
    const { id } = journal.sessions.createSession({ backend: "claude" });
    const turn = journal.turns.submitTurn(id, { prompt: "hello" });
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
    expect(journal.events.readEvents(turn.id)).toEqual([
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
    const { id } = journal.sessions.createSession({ backend: "claude" });
    expect(() => journal.turns.submitTurn(id, { prompt: "" })).toThrow(
      /input\.prompt: prompt must not be empty/,
    );
    expect(() => journal.turns.submitTurn("missing", { prompt: "x" })).toThrow(
      expect.objectContaining({ code: "session_not_found" }),
    );
  });

  test("one active turn per session: later turns queue and are promoted in seq order", () => {
    const { journal } = createTestJournal();
    const { id } = journal.sessions.createSession({ backend: "codex" });
    const first = journal.turns.submitTurn(id, { prompt: "one" });
    const second = journal.turns.submitTurn(id, { prompt: "two" });
    const third = journal.turns.submitTurn(id, { prompt: "three" });
    expect([first.phase, second.phase, third.phase]).toEqual(["accepted", "queued", "queued"]);
    expect(journal.sessions.getSession(id)?.queuedTurns).toBe(2);
    expect(journal.turns.promoteNextTurn(id)).toBeUndefined();

    journal.turns.transition(first.id, {
      phase: "failed",
      error: { code: "spawn_failed", message: "ENOENT" },
    });
    expect(journal.turns.promoteNextTurn(id)).toMatchObject({ id: second.id, phase: "accepted" });
    expect(journal.turns.promoteNextTurn(id)).toBeUndefined();
    expect(eventTypes(journal, second.id)).toEqual(["phase", "phase"]);
    journal.turns.transition(second.id, { phase: "cancelled" });
    expect(journal.turns.promoteNextTurn(id)?.id).toBe(third.id);
    expect(journal.turns.listTurns(id).map((turn) => [turn.seq, turn.phase])).toEqual([
      [1, "failed"],
      [2, "cancelled"],
      [3, "accepted"],
    ]);
  });

  test("a new turn never overtakes the queue, even while no turn is active", () => {
    const { journal } = createTestJournal();
    const { id } = journal.sessions.createSession({ backend: "claude" });
    const first = journal.turns.submitTurn(id, { prompt: "one" });
    const second = journal.turns.submitTurn(id, { prompt: "two" });
    journal.turns.transition(first.id, { phase: "cancelled" });
    expect(journal.turns.submitTurn(id, { prompt: "three" }).phase).toBe("queued");
    expect(journal.turns.promoteNextTurn(id)?.id).toBe(second.id);
  });

  test("the store itself refuses a second active turn in a session", () => {
    const { journal, path } = createTestJournal();
    const { id } = journal.sessions.createSession({ backend: "claude" });
    journal.turns.submitTurn(id, { prompt: "one" });
    const queued = journal.turns.submitTurn(id, { prompt: "two" });
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
    const { id } = journal.sessions.createSession({ backend: "claude" });
    expect(journal.turns.getCurrentTurn(id)).toBeUndefined();
    const first = journal.turns.submitTurn(id, { prompt: "one" });
    const second = journal.turns.submitTurn(id, { prompt: "two" });
    expect(journal.turns.getCurrentTurn(id)?.id).toBe(first.id);
    journal.turns.transition(first.id, { phase: "cancelled" });
    expect(journal.turns.getCurrentTurn(id)?.id).toBe(second.id);
    journal.turns.promoteNextTurn(id);
    journal.turns.transition(second.id, { phase: "spawning" });
    journal.turns.transition(second.id, { phase: "running" });
    journal.turns.transition(second.id, { phase: "completed" });
    expect(journal.turns.getCurrentTurn(id)).toMatchObject({ id: second.id, phase: "completed" });
  });

  test("phases move only forward; a terminal phase is final", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    expect(() => journal.turns.transition(turn.id, { phase: "spawning" })).toThrow(
      "turn id-000002 is running; cannot move to spawning (it can move to completed, failed, cancelled, interrupted)",
    );
    journal.turns.transition(turn.id, { phase: "completed" });
    const error = (() => {
      try {
        journal.turns.transition(turn.id, { phase: "failed" });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(JournalError);
    expect(error).toMatchObject({
      code: "invalid_transition",
      message: expect.stringContaining("it has ended"),
    });
    expect(() => journal.turns.transition("missing", { phase: "failed" })).toThrow(
      expect.objectContaining({ code: "turn_not_found" }),
    );
  });

  test("running records the CLI process, spawning the bridge generation and the conversation id", () => {
    const { journal } = createTestJournal();
    const { id } = journal.sessions.createSession({ backend: "claude" });
    const turn = journal.turns.submitTurn(id, { prompt: "hi" });
    journal.maintenance.bumpGeneration();
    journal.maintenance.bumpGeneration();
    journal.turns.transition(turn.id, { phase: "spawning", conversationId: "3f1c8a52-claude-session" });
    const running = journal.turns.transition(turn.id, {
      phase: "running",
      process: { pid: 77, startTime: "9001" },
    });
    expect(running).toMatchObject({
      bridgeGeneration: 2,
      conversationId: "3f1c8a52-claude-session",
      process: { pid: 77, startTime: "9001" },
    });
    expect(journal.sessions.getSession(id)?.conversationId).toBe("3f1c8a52-claude-session");
    expect(() =>
      journal.turns.transition(turn.id, { phase: "completed", process: { pid: 0, startTime: "" } }),
    ).toThrow(/change\.process\.pid.*change\.process\.startTime/);
  });

  test("a conversation is established by another completed turn of the session in it, nothing else", () => {
    const { journal } = createTestJournal();
    const { id } = journal.sessions.createSession({ backend: "claude" });
    const run = (conversationId: string, end: "completed" | "failed") => {
      const turn = journal.turns.submitTurn(id, { prompt: "hi" });
      journal.turns.transition(turn.id, { phase: "spawning", conversationId });
      journal.turns.transition(turn.id, { phase: "running", process: { pid: 77, startTime: "9001" } });
      return journal.turns.transition(turn.id, { phase: end });
    };
    const failed = run("conversation-a", "failed");
    expect(journal.turns.conversationEstablished(id, "conversation-a", "another-turn")).toBe(false);
    const completed = run("conversation-a", "completed");
    expect(journal.turns.conversationEstablished(id, "conversation-a", "another-turn")).toBe(true);
    // A turn does not establish its own conversation, nor one it was not in.
    expect(journal.turns.conversationEstablished(id, "conversation-a", completed.id)).toBe(false);
    expect(journal.turns.conversationEstablished(id, "conversation-b", failed.id)).toBe(false);
    const other = journal.sessions.createSession({ backend: "claude" });
    expect(journal.turns.conversationEstablished(other.id, "conversation-a", "another-turn")).toBe(false);
  });

  test("the spawn marker is journaled with spawning, kept through the turn and after a reopen", () => {
    const { journal, reopen } = createTestJournal();
    const { id } = journal.sessions.createSession({ backend: "codex" });
    const turn = journal.turns.submitTurn(id, { prompt: "hi" });
    const spawnMarker = "0123456789abcdef0123456789abcdef";
    const spawning = journal.turns.transition(turn.id, { phase: "spawning", spawnMarker });
    expect(spawning.spawnMarker).toBe(spawnMarker);
    journal.turns.transition(turn.id, { phase: "running", process: { pid: 77, startTime: "9001" } });
    expect(() => journal.turns.transition(turn.id, { phase: "completed", spawnMarker })).toThrow(
      "change.spawnMarker: spawnMarker is journaled with the spawning phase only",
    );
    const reopened = reopen();
    expect(reopened.turns.getTurn(turn.id)).toMatchObject({
      phase: "running",
      spawnMarker,
      process: { pid: 77, startTime: "9001" },
    });
    expect(reopened.turns.listNonTerminalTurns().map((unfinished) => unfinished.spawnMarker)).toEqual([
      spawnMarker,
    ]);
    expect(reopened.turns.transition(turn.id, { phase: "completed" }).spawnMarker).toBe(spawnMarker);
  });

  test("a terminal phase writes a terminal event carrying the outcome and error", () => {
    const { journal, clock } = createTestJournal();
    const turn = runningTurn(journal);
    clock.advance(1500);
    const failed = journal.turns.transition(turn.id, {
      phase: "failed",
      cause: { type: "error", code: "api_error", message: "API Error: 400 scripted failure" },
      error: { code: "api_error", message: "API Error: 400 scripted failure" },
    });
    expect(failed).toMatchObject({
      phase: "failed",
      error: { code: "api_error" },
      endedAt: "2026-11-30T12:00:01.500Z",
    });
    expect(
      journal.events.readEvents(turn.id, failed.eventCount - 2).map((envelope) => envelope.event),
    ).toEqual([
      { type: "error", code: "api_error", message: "API Error: 400 scripted failure" },
      {
        type: "terminal",
        outcome: "failed",
        error: { code: "api_error", message: "API Error: 400 scripted failure" },
      },
    ]);
  });
});
