import Database from "better-sqlite3";
import { describe, expect, test } from "vitest";
import { createUuidV7Generator } from "../src/ids.js";
import { openJournal } from "../src/journal.js";
import { latestSchemaVersion } from "../src/migrations.js";
import { createTestJournal, oldJournal, runningTurn, tempDir } from "./helpers.js";

describe("opening", () => {
  test("creates the schema at the latest version in WAL mode, and reopening migrates nothing", () => {
    const { journal, path, reopen } = createTestJournal();
    journal.sessions.createSession({ id: "kept", backend: "claude" });
    reopen().maintenance.close();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma("user_version", { simple: true })).toBe(latestSchemaVersion);
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(db.prepare("SELECT id FROM sessions").pluck().all()).toEqual(["kept"]);
    } finally {
      db.close();
    }
  });

  test("commits use synchronous FULL unless asked otherwise", () => {
    const { journal, reopen } = createTestJournal();
    expect(journal.maintenance.durability()).toEqual({ journalMode: "wal", synchronous: "FULL" });
    expect(reopen({ synchronous: "NORMAL" }).maintenance.durability()).toEqual({
      journalMode: "wal",
      synchronous: "NORMAL",
    });
  });

  test("a version 1 journal (no spawn marker column) migrates and keeps its turns", () => {
    const path = oldJournal(1);

    const journal = openJournal({ path });
    try {
      const turn = journal.turns.getTurn("t1");
      expect(turn).toMatchObject({ phase: "running", process: { pid: 77, startTime: "9001" } });
      expect(turn).not.toHaveProperty("spawnMarker");
      expect(journal.maintenance.checkConsistency()).toEqual([]);
      const next = journal.turns.submitTurn("s1", { prompt: "next" });
      journal.turns.transition("t1", { phase: "completed" });
      const promoted = journal.turns.promoteNextTurn("s1")!;
      expect(promoted.id).toBe(next.id);
      const spawnMarker = "fedcba9876543210fedcba9876543210";
      expect(journal.turns.transition(next.id, { phase: "spawning", spawnMarker }).spawnMarker).toBe(
        spawnMarker,
      );
    } finally {
      journal.maintenance.close();
    }
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma("user_version", { simple: true })).toBe(latestSchemaVersion);
    } finally {
      db.close();
    }
  });

  test("refuses a journal written by a newer schema", () => {
    const path = `${tempDir()}/journal.sqlite`;
    const db = new Database(path);
    db.pragma(`user_version = ${latestSchemaVersion + 1}`);
    db.close();
    expect(() => openJournal({ path })).toThrow(expect.objectContaining({ code: "journal_too_new" }));
  });
});

describe("bridge generation", () => {
  test("starts at 0, each bump is committed and survives a reopen", () => {
    const { journal, reopen } = createTestJournal();
    expect(journal.maintenance.bridgeGeneration()).toBe(0);
    expect(journal.maintenance.bumpGeneration()).toBe(1);
    const second = reopen();
    expect(second.maintenance.bridgeGeneration()).toBe(1);
    expect(second.maintenance.bumpGeneration()).toBe(2);
    const turn = runningTurn(second);
    expect(turn.bridgeGeneration).toBe(2);
    expect(reopen().maintenance.bridgeGeneration()).toBe(2);
  });
});

describe("consistency check", () => {
  test("a healthy journal has no problem; tampering with the bytes is found", () => {
    const { journal, path } = createTestJournal();
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [{ type: "assistant.text", text: "hello" }]);
    journal.secrets.requestSecret(turn.id, { toolCallKey: "k", name: "N", prompt: "p" });
    expect(journal.maintenance.checkConsistency()).toEqual([]);

    const db = new Database(path);
    try {
      db.exec("DROP TRIGGER turns_terminal_is_final");
      db.exec("DROP TRIGGER turn_events_append_only_delete");
      db.exec("DROP TRIGGER turns_effects_only_grow");
      db.prepare("UPDATE turns SET phase = 'completed', effects = 0 WHERE id = ?").run(turn.id);
      db.prepare("DELETE FROM turn_events WHERE turn_id = ? AND idx = 1").run(turn.id);
    } finally {
      db.close();
    }
    expect(journal.maintenance.checkConsistency().map((problem) => problem.kind)).toEqual([
      "event_indexes",
      "phase_mismatch",
      "effects_mismatch",
      "secret_mismatch",
    ]);
  });

  test.each([
    [
      "a new journal",
      () => {
        const { journal, path } = createTestJournal();
        runningTurn(journal);
        journal.maintenance.close();
        return path;
      },
    ],
    [
      "a version 5 journal, migrated",
      () => {
        const path = oldJournal(5);
        openJournal({ path }).maintenance.close();
        return path;
      },
    ],
  ])(
    "in %s, the store takes events of a live turn and refuses them in every terminal phase",
    (_, journalFile) => {
      const path = journalFile();
      const db = new Database(path);
      try {
        const turnId = db.prepare("SELECT id FROM turns LIMIT 1").pluck().get() as string;
        const next = db.prepare("SELECT count(*) FROM turn_events WHERE turn_id = ?").pluck();
        const insert = db.prepare(
          "INSERT INTO turn_events (turn_id, idx, at, type, payload) VALUES (?, ?, 0, 'x', '{}')",
        );
        const setPhase = db.prepare("UPDATE turns SET phase = ? WHERE id = ?");
        for (const phase of ["spawning", "running", "awaiting_secret"]) {
          setPhase.run(phase, turnId);
          expect(() => insert.run(turnId, next.get(turnId))).not.toThrow();
        }
        for (const phase of ["completed", "failed", "cancelled", "interrupted"]) {
          // A terminal phase is final: each is tried in a transaction rolled back after.
          db.exec("SAVEPOINT terminal");
          setPhase.run(phase, turnId);
          expect(() => insert.run(turnId, next.get(turnId)), phase).toThrow(/has ended/);
          db.exec("ROLLBACK TO terminal; RELEASE terminal");
        }
      } finally {
        db.close();
      }
    },
  );

  test("the store refuses a gap in event indexes and events after the end", () => {
    const { journal, path } = createTestJournal();
    const turn = runningTurn(journal);
    const db = new Database(path);
    try {
      const insert = db.prepare(
        "INSERT INTO turn_events (turn_id, idx, at, type, payload) VALUES (?, ?, 0, 'x', '{}')",
      );
      expect(() => insert.run(turn.id, turn.eventCount + 1)).toThrow(/contiguous/);
      journal.turns.transition(turn.id, { phase: "completed" });
      expect(() => insert.run(turn.id, turn.eventCount + 1)).toThrow(/has ended/);
      expect(() =>
        db.prepare("UPDATE turn_events SET payload = '{}' WHERE turn_id = ?").run(turn.id),
      ).toThrow(/append only/);
    } finally {
      db.close();
    }
  });
});

describe("ids", () => {
  test("UUIDv7 ids carry the clock's time and sort in creation order within a millisecond", () => {
    let now = Date.UTC(2026, 10, 30);
    const newId = createUuidV7Generator(() => now);
    const ids = Array.from({ length: 5000 }, (_, index) => {
      if (index === 2500) now += 1;
      return newId();
    });
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Number.parseInt(ids[0]!.replaceAll("-", "").slice(0, 12), 16)).toBe(Date.UTC(2026, 10, 30));
  });

  test("the journal mints UUIDv7 ids by default", () => {
    const journal = openJournal({ path: `${tempDir()}/journal.sqlite` });
    try {
      expect(journal.sessions.createSession({ backend: "codex" }).id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    } finally {
      journal.maintenance.close();
    }
  });
});
