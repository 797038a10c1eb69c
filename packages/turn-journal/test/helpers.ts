import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Backend, TurnRecord } from "@bridgeworks/protocol";
import Database from "better-sqlite3";
import { afterEach } from "vitest";
import type { Clock } from "../src/clock.js";
import { openJournal, type TurnJournal } from "../src/journal.js";
import { migrate } from "../src/migrations.js";
import type { JournalOptions } from "../src/options.js";

/** A clock that moves only when told to, running due timers as it goes. */
export class ManualClock implements Clock {
  #now: number;
  #nextHandle = 1;
  readonly #timers = new Map<number, { at: number; callback: () => void }>();

  constructor(start = Date.UTC(2026, 10, 30, 12, 0, 0)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, delayMs: number): unknown {
    const handle = this.#nextHandle++;
    this.#timers.set(handle, { at: this.#now + delayMs, callback });
    return handle;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Time passes while the event loop is blocked: no timer runs. */
  skip(milliseconds: number): void {
    this.#now += milliseconds;
  }

  advance(milliseconds: number): void {
    this.#now += milliseconds;
    for (const [handle, timer] of [...this.#timers].sort(([, a], [, b]) => a.at - b.at)) {
      if (timer.at > this.#now) continue;
      this.#timers.delete(handle);
      timer.callback();
    }
  }
}

export function sequentialIds(prefix = "id"): () => string {
  let next = 0;
  return () => `${prefix}-${String(++next).padStart(6, "0")}`;
}

const openedDirs: string[] = [];
const openedJournals: TurnJournal[] = [];

afterEach(() => {
  for (const journal of openedJournals.splice(0)) journal.maintenance.close();
  for (const dir of openedDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "turn-journal-"));
  openedDirs.push(dir);
  return dir;
}

export interface TestJournal {
  journal: TurnJournal;
  clock: ManualClock;
  path: string;
  reopen(options?: Partial<JournalOptions>): TurnJournal;
}

/** A journal on a fresh file in a temp dir, with a manual clock and sequential ids; closed after each test. */
export function createTestJournal(options: Partial<JournalOptions> = {}): TestJournal {
  const path = join(tempDir(), "journal.sqlite");
  const clock = new ManualClock();
  const newId = sequentialIds();
  const open = (overrides: Partial<JournalOptions>) => {
    const journal = openJournal({ path, clock, newId, ...options, ...overrides });
    openedJournals.push(journal);
    return journal;
  };
  const journal = open({});
  return {
    journal,
    clock,
    path,
    reopen(overrides = {}) {
      journal.maintenance.close();
      return open(overrides);
    },
  };
}

/** A session with one turn moved to `running`. */
export function runningTurn(journal: TurnJournal, backend: Backend = "claude"): TurnRecord {
  const session = journal.sessions.createSession({ backend });
  const turn = journal.turns.submitTurn(session.id, { prompt: "do the thing" });
  journal.turns.transition(turn.id, { phase: "spawning" });
  return journal.turns.transition(turn.id, { phase: "running", process: { pid: 4242, startTime: "123456" } });
}

export function eventTypes(journal: TurnJournal, turnId: string): string[] {
  return journal.events.readEvents(turnId, 0, 10_000).map((envelope) => envelope.event.type);
}

export function expectContiguous(journal: TurnJournal, turnId: string): number {
  const indexes = journal.events.readEvents(turnId, 0, 100_000).map((envelope) => envelope.index);
  const expected = indexes.map((_, position) => position);
  if (JSON.stringify(indexes) !== JSON.stringify(expected)) {
    throw new Error(`turn ${turnId} has indexes ${indexes.join(",")}`);
  }
  return indexes.length;
}

/**
 * A journal file at schema `version` (as an older build left it) holding session `s1` with turn `t1`
 * running as pid 77 (start time 9001) and its three phase events.
 */
export function oldJournal(version: number): string {
  const path = `${tempDir()}/journal.sqlite`;
  const db = new Database(path);
  try {
    if (migrate(db, version) !== version) throw new Error(`could not build a version ${version} journal`);
    db.exec(`
      INSERT INTO sessions (id, backend, created_at) VALUES ('s1', 'claude', 1);
      INSERT INTO turns (id, session_id, seq, input, phase, attempt, bridge_generation, pid, start_time,
          created_at, updated_at)
        VALUES ('t1', 's1', 1, '{"prompt":"hi"}', 'running', 1, 3, 77, '9001', 1, 2);
      INSERT INTO turn_events (turn_id, idx, at, type, payload) VALUES
        ('t1', 0, 1, 'phase', '{"type":"phase","phase":"accepted"}'),
        ('t1', 1, 1, 'phase', '{"type":"phase","phase":"spawning"}'),
        ('t1', 2, 2, 'phase', '{"type":"phase","phase":"running"}');
    `);
  } finally {
    db.close();
  }
  return path;
}

/** Makes the journal's next insert of an event of `type` fail inside its transaction. */
export function failNextEventOfType(path: string, type: string): () => void {
  const db = new Database(path);
  db.exec(`CREATE TRIGGER injected_failure BEFORE INSERT ON turn_events WHEN NEW.type = '${type}'
           BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
  return () => {
    db.exec("DROP TRIGGER injected_failure");
    db.close();
  };
}
