import Database from "better-sqlite3";
import { describe, expect, test } from "vitest";
import { openJournal } from "../src/journal.js";
import { planRecovery, recoverJournal } from "../src/recovery.js";
import { createTestJournal, eventTypes, expectContiguous, oldJournal, runningTurn } from "./helpers.js";

const bash = {
  toolCallId: "toolu_1",
  toolName: "Bash",
  inputPreview: '{"command":"echo hi"}',
  effectFree: false,
};
const read = {
  toolCallId: "toolu_r",
  toolName: "Read",
  inputPreview: '{"file_path":"/x"}',
  effectFree: true,
};

describe("admitToolCall: the effect is recorded before the tool may start", () => {
  test("commits the tool.admitted event and the tool_started effect together, visible at once", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const admission = journal.gate.admitToolCall(turn.id, bash);
    expect(admission).toMatchObject({ turnId: turn.id, ...bash, eventIndex: turn.eventCount });
    expect(journal.turns.getTurn(turn.id)?.effects).toEqual(["tool_started"]);
    expect(journal.events.readEvents(turn.id).at(-1)?.event).toEqual({
      type: "tool.admitted",
      toolId: "toolu_1",
      name: "Bash",
      inputPreview: '{"command":"echo hi"}',
    });
    expect(journal.gate.listToolAdmissions(turn.id)).toEqual([admission]);
    expect(journal.maintenance.checkConsistency()).toEqual([]);
  });

  test("flushes buffered stream events first, so the admission keeps its place after them", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 100, maxDelayMs: 10_000 } });
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "let me run it" }]);
    expect(eventTypes(journal, turn.id)).not.toContain("reasoning");
    journal.gate.admitToolCall(turn.id, bash);
    expect(eventTypes(journal, turn.id).slice(-2)).toEqual(["reasoning", "tool.admitted"]);
    expectContiguous(journal, turn.id);
  });

  test("a reader on another connection sees the admission as soon as admitToolCall returns", () => {
    const { journal, path } = createTestJournal();
    const turn = runningTurn(journal);
    journal.gate.admitToolCall(turn.id, bash);
    const other = openJournal({ path });
    try {
      expect(other.turns.getTurn(turn.id)?.effects).toEqual(["tool_started"]);
      expect(other.gate.listToolAdmissions(turn.id).map((a) => a.toolCallId)).toEqual(["toolu_1"]);
    } finally {
      other.maintenance.close();
    }
  });

  test("an effect-free tool is recorded without an effect: a turn that only read is replayed", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    journal.gate.admitToolCall(turn.id, read);
    journal.events.appendEvents(turn.id, [
      { type: "tool.started", toolId: "toolu_r", name: "Read", input: { file_path: "/x" }, effectFree: true },
    ]);
    expect(journal.turns.getTurn(turn.id)?.effects).toEqual([]);
    expect(planRecovery([journal.turns.getTurn(turn.id)!])[0]).toMatchObject({ action: "replay" });
    journal.gate.admitToolCall(turn.id, bash);
    expect(planRecovery([journal.turns.getTurn(turn.id)!])[0]).toMatchObject({
      action: "interrupt",
      reason: "has_effects",
    });
    expect(journal.maintenance.checkConsistency()).toEqual([]);
  });

  test("recovery interrupts a turn whose only record is an admitted call", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    journal.gate.admitToolCall(turn.id, bash);
    const [outcome] = recoverJournal(journal);
    expect(outcome?.decision).toMatchObject({ action: "interrupt", reason: "has_effects" });
    expect(journal.turns.getTurn(turn.id)?.phase).toBe("interrupted");
    expect(journal.turns.listTurns(turn.sessionId)).toHaveLength(1);
  });

  test("admitting the same call again returns its first record and writes nothing", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const first = journal.gate.admitToolCall(turn.id, bash);
    const count = journal.turns.getTurn(turn.id)!.eventCount;
    expect(journal.gate.admitToolCall(turn.id, { ...bash, inputPreview: "other" })).toEqual(first);
    expect(journal.turns.getTurn(turn.id)!.eventCount).toBe(count);
  });

  test("admits while awaiting a secret (another call of the turn may run), refuses ended and unspawned turns", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    journal.secrets.requestSecret(turn.id, { toolCallKey: "k", name: "TOKEN", prompt: "?" });
    expect(journal.gate.admitToolCall(turn.id, bash).toolCallId).toBe("toolu_1");

    const session = journal.sessions.createSession({ backend: "codex" });
    const accepted = journal.turns.submitTurn(session.id, { prompt: "p" });
    expect(() => journal.gate.admitToolCall(accepted.id, bash)).toThrow(
      expect.objectContaining({ code: "not_accepting_events", message: expect.stringContaining("accepted") }),
    );
    journal.turns.transition(accepted.id, { phase: "cancelled" });
    expect(() => journal.gate.admitToolCall(accepted.id, bash)).toThrow(
      expect.objectContaining({
        code: "not_accepting_events",
        message: expect.stringContaining("cancelled"),
      }),
    );
    expect(() => journal.gate.admitToolCall("nope", bash)).toThrow(
      expect.objectContaining({ code: "turn_not_found" }),
    );
  });

  test("bad input names the field", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    expect(() => journal.gate.admitToolCall(turn.id, { ...bash, toolCallId: "" })).toThrow(
      expect.objectContaining({
        code: "invalid_input",
        message: expect.stringContaining("admission.toolCallId"),
      }),
    );
    expect(() => journal.gate.admitToolCall(turn.id, { ...bash, inputPreview: "x".repeat(2_001) })).toThrow(
      expect.objectContaining({ message: expect.stringContaining("admission.inputPreview") }),
    );
  });

  test("on a NORMAL journal the admission still commits, and the connection goes back to NORMAL", () => {
    const { journal } = createTestJournal({ synchronous: "NORMAL" });
    const turn = runningTurn(journal);
    journal.gate.admitToolCall(turn.id, bash);
    expect(journal.maintenance.durability().synchronous).toBe("NORMAL");
    expect(journal.gate.listToolAdmissions(turn.id)).toHaveLength(1);
  });
});

describe("the store refuses gate records that break its invariants", () => {
  function rawOf(path: string) {
    return new Database(path);
  }

  test("a gate record for an ended turn, without its event, or with an effect the turn does not record", () => {
    const { journal, path } = createTestJournal();
    const live = runningTurn(journal);
    const admission = journal.gate.admitToolCall(live.id, bash);
    const ended = runningTurn(journal);
    const endedAdmission = journal.gate.admitToolCall(ended.id, bash);
    journal.turns.transition(ended.id, { phase: "completed" });
    const db = rawOf(path);
    const insert = db.prepare(
      `INSERT INTO tool_gates (turn_id, tool_call_id, tool_name, effect_free, event_idx, admitted_at)
       VALUES (?, ?, 'Bash', ?, ?, 1)`,
    );
    try {
      expect(() => insert.run(ended.id, "x", 1, endedAdmission.eventIndex)).toThrow(
        /only a spawning, running or awaiting_secret turn/,
      );
      expect(() => insert.run(live.id, "x", 1, 0)).toThrow(/tool.admitted event/);
      const fresh = runningTurn(journal);
      db.prepare(
        `INSERT INTO turn_events (turn_id, idx, at, type, payload) VALUES (?, ?, 1, 'tool.admitted', ?)`,
      ).run(
        fresh.id,
        fresh.eventCount,
        JSON.stringify({ type: "tool.admitted", toolId: "y", name: "Bash", inputPreview: "" }),
      );
      expect(() => insert.run(fresh.id, "y", 0, fresh.eventCount)).toThrow(/must record tool_started/);
      expect(() => db.prepare("UPDATE tool_gates SET effect_free = 1").run()).toThrow(/append only/);
      expect(() => db.prepare("DELETE FROM tool_gates").run()).toThrow(/append only/);
      expect(() => db.prepare("UPDATE turns SET effects = 0 WHERE id = ?").run(admission.turnId)).toThrow(
        /never cleared/,
      );
    } finally {
      db.close();
    }
  });

  test("checkConsistency reports an admission event without its gate record", () => {
    const { journal, path } = createTestJournal();
    const turn = runningTurn(journal);
    const db = rawOf(path);
    try {
      db.prepare(
        `INSERT INTO turn_events (turn_id, idx, at, type, payload) VALUES (?, ?, 1, 'tool.admitted', ?)`,
      ).run(
        turn.id,
        turn.eventCount,
        JSON.stringify({
          type: "tool.admitted",
          toolId: "lost",
          name: "Bash",
          inputPreview: "",
          effectFree: true,
        }),
      );
    } finally {
      db.close();
    }
    expect(journal.maintenance.checkConsistency().map((problem) => problem.kind)).toContain("gate_mismatch");
  });
});

test("a version 2 journal migrates to gate records and keeps its turns", () => {
  const path = oldJournal(2);
  const journal = openJournal({ path });
  try {
    expect(journal.gate.admitToolCall("t1", bash).eventIndex).toBe(3);
    expect(journal.maintenance.checkConsistency()).toEqual([]);
  } finally {
    journal.maintenance.close();
  }
});

describe("recordToolCompletion: a finished call, as its PostToolUse hook reports it", () => {
  test("marks the admitted call completed, keeps the first time when reported again, and is read back", () => {
    const { journal, path, clock } = createTestJournal();
    const turn = runningTurn(journal);
    journal.gate.admitToolCall(turn.id, bash);
    journal.gate.admitToolCall(turn.id, read);
    expect(journal.gate.listToolAdmissions(turn.id).map((a) => a.completedAt)).toEqual([
      undefined,
      undefined,
    ]);
    const admittedAt = journal.gate.listToolAdmissions(turn.id)[0]!.admittedAt;
    clock.advance(4_000);
    const completed = journal.gate.recordToolCompletion(turn.id, bash.toolCallId);
    const completedAt = new Date(Date.parse(admittedAt) + 4_000).toISOString();
    expect(completed).toMatchObject({ toolCallId: "toolu_1", completedAt });
    clock.advance(1_000);
    expect(journal.gate.recordToolCompletion(turn.id, bash.toolCallId).completedAt).toBe(
      completed.completedAt,
    );
    const other = openJournal({ path });
    try {
      expect(other.gate.listToolAdmissions(turn.id).map((a) => [a.toolCallId, a.completedAt])).toEqual([
        ["toolu_1", completedAt],
        ["toolu_r", undefined],
      ]);
    } finally {
      other.maintenance.close();
    }
    expect(journal.maintenance.checkConsistency()).toEqual([]);
  });

  test("a call the gate never admitted for the turn is refused by name", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    expect(() => journal.gate.recordToolCompletion(turn.id, "toolu_never")).toThrow(
      expect.objectContaining({
        code: "tool_call_not_admitted",
        message: expect.stringContaining("toolu_never"),
      }),
    );
  });
});
