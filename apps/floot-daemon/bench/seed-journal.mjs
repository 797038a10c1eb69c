// Fills a state dir's journal with months of history in one transaction, straight through SQL (the
// journal's own schema, migrated by openJournal, with every trigger in force, the search index's
// too): `sessions` sessions of `turnsPerSession` completed turns, each with `eventsPerTurn` events
// (phase events, reasoning, assistant text, usage, terminal), so checkConsistency() stays clean. Ids
// are UUIDv7-shaped and time-ordered like the journal's own. `running` sessions keep their last turn
// running (a CLI that is gone), for recovery to decide.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { openJournal } from "@bridgeworks/turn-journal";
import Database from "better-sqlite3";

function idAt(ms) {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const title = (session, turn) => `session ${session} turn ${turn}: refactor module ${session % 97}`;

export function seedJournal(stateDir, { sessions, turnsPerSession, eventsPerTurn, running = 0 }) {
  const path = join(stateDir, "journal.sqlite");
  openJournal({ path }).maintenance.close();
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const insertSession = db.prepare("INSERT INTO sessions (id, backend, created_at) VALUES (?, ?, ?)");
  // Titled as the journal titles a session (an update): the search index's trigger takes it.
  const setTitle = db.prepare("UPDATE sessions SET title = ? WHERE id = ?");
  const insertTurn = db.prepare(
    `INSERT INTO turns (id, session_id, seq, input, phase, attempt, effects, bridge_generation, conversation_id,
       created_at, updated_at) VALUES (?, ?, ?, ?, 'running', 1, 1, 1, ?, ?, ?)`,
  );
  const insertEvent = db.prepare(
    "INSERT INTO turn_events (turn_id, idx, at, type, payload) VALUES (?, ?, ?, ?, ?)",
  );
  const endTurn = db.prepare(
    "UPDATE turns SET phase = 'completed', ended_at = ?, updated_at = ? WHERE id = ?",
  );
  const events = (turn) => {
    const list = [
      { type: "phase", phase: "accepted" },
      { type: "phase", phase: "spawning" },
      { type: "phase", phase: "running" },
    ];
    const body = Math.max(0, eventsPerTurn - 5);
    for (let i = 0; i < body; i += 1) {
      list.push(
        i % 2 === 0
          ? { type: "reasoning", text: `thinking about step ${i} of turn ${turn}` }
          : { type: "assistant.text", text: `answer part ${i} of turn ${turn}` },
      );
    }
    list.push({ type: "usage", input: 1200, output: 80 });
    return list;
  };
  const start = Date.now() - sessions * turnsPerSession * 1000;
  let clock = start;
  const seed = db.transaction(() => {
    const runningIds = [];
    for (let s = 0; s < sessions; s += 1) {
      const sessionId = idAt(clock);
      insertSession.run(sessionId, s % 2 === 0 ? "claude" : "codex", clock);
      setTitle.run(title(s, 1), sessionId);
      const keepRunning = s >= sessions - running;
      for (let t = 1; t <= turnsPerSession; t += 1) {
        clock += 1000;
        const turnId = idAt(clock);
        const prompt = JSON.stringify({ prompt: title(s, t) });
        insertTurn.run(turnId, sessionId, t, prompt, `conv-${s}`, clock, clock);
        let idx = 0;
        for (const event of events(t)) {
          insertEvent.run(turnId, idx++, clock, event.type, JSON.stringify(event));
        }
        if (keepRunning && t === turnsPerSession) {
          runningIds.push(turnId);
          break;
        }
        const terminal = { type: "terminal", outcome: "completed" };
        insertEvent.run(turnId, idx, clock, terminal.type, JSON.stringify(terminal));
        endTurn.run(clock, clock, turnId);
      }
    }
    return runningIds;
  });
  const runningTurns = seed.immediate();
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return {
    sessions,
    turns: sessions * turnsPerSession,
    events: sessions * turnsPerSession * eventsPerTurn,
    runningTurns,
  };
}
