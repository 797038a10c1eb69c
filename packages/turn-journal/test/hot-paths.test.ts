import Database from "better-sqlite3";
import { describe, expect, test } from "vitest";
import { preparePermissionStatements } from "../src/permission-rows.js";
import { prepareStatements } from "../src/statements.js";
import { createTestJournal, runningTurn } from "./helpers.js";

/**
 * The statements that may read through a whole table: each walks a partial index whose size is what is
 * open (unfinished turns, open requests), or is the full list a caller asked for by name.
 */
const boundedScans: Readonly<Record<string, RegExp>> = {
  sessions: /^SCAN s USING INDEX sessions_newest$/,
  unfinishedTurns: /^SCAN t USING INDEX turns_unfinished$/,
  // In the order they were asked, on the index of open requests by (created_at, id): no sort.
  openSecretRequests: /^SCAN secret_requests USING INDEX secret_requests_open_since$/,
  open: /^SCAN permission_requests USING INDEX permission_requests_open_since$/,
  // The newest N (LIMIT), walking the primary key from its end.
  recent: /^SCAN permission_requests USING INDEX sqlite_autoindex_permission_requests_1$/,
};

function queryPlan(db: Database.Database, sql: string): string[] {
  const named = [...new Set(sql.match(/@\w+/g) ?? [])];
  const statement = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const rows = (
    named.length > 0
      ? statement.all(Object.fromEntries(named.map((name) => [name.slice(1), null])))
      : statement.all(...Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => "x"))
  ) as { detail: string }[];
  return rows.map((row) => row.detail);
}

describe("hot paths", () => {
  test("no statement the journal prepares scans a table, except over a bounded partial index", () => {
    const { journal, path } = createTestJournal();
    runningTurn(journal);
    journal.maintenance.close();
    const db = new Database(path);
    try {
      const statements = { ...prepareStatements(db), ...preparePermissionStatements(db) };
      const scans: string[] = [];
      for (const [name, statement] of Object.entries(statements)) {
        // The journal's `Query` type hides the prepared statement's SQL; the object is a Statement.
        for (const step of queryPlan(db, (statement as unknown as Database.Statement).source)) {
          if (!step.startsWith("SCAN")) continue;
          if (boundedScans[name]?.test(step)) continue;
          scans.push(`${name}: ${step}`);
        }
      }
      expect(scans).toEqual([]);
      expect(Object.keys(statements)).toEqual(expect.arrayContaining(Object.keys(boundedScans)));
    } finally {
      db.close();
    }
  });

  test("a batch of stream events updates its turn's row without writing the phase", () => {
    const { journal, path } = createTestJournal({ batch: { maxEvents: 2, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    // Rewriting `phase`, even to the same value, reworks the turns' partial indexes: a stream batch,
    // which never changes the phase, costed more than its own inserts.
    const spy = new Database(path);
    spy.exec(`CREATE TABLE phase_writes (turn_id TEXT NOT NULL);
      CREATE TRIGGER count_phase_writes AFTER UPDATE OF phase ON turns
        BEGIN INSERT INTO phase_writes VALUES (NEW.id); END;`);
    const phaseWrites = () => spy.prepare("SELECT count(*) FROM phase_writes").pluck().get();
    try {
      journal.events.appendEvents(turn.id, [
        { type: "reasoning", text: "one" },
        { type: "reasoning", text: "two" },
      ]);
      journal.events.appendEvents(turn.id, [{ type: "usage", input: 3, output: 1 }]);
      journal.events.flush();
      expect(journal.events.readEvents(turn.id).map((e) => e.event.type)).toEqual([
        "phase",
        "phase",
        "phase",
        "reasoning",
        "reasoning",
        "usage",
      ]);
      expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(6);
      expect(phaseWrites()).toBe(0);
      journal.turns.transition(turn.id, { phase: "completed" });
      expect(phaseWrites()).toBe(1);
      expect(journal.maintenance.checkConsistency()).toEqual([]);
    } finally {
      spy.close();
    }
  });
});
