// Benchmarks of the built journal (run `pnpm bench` in this package). Prints one JSON document.
//  - append: durable event append rate with batching, next to a bare better-sqlite3 insert loop in the
//    same run and on the same disk (TURN_JOURNAL_BENCH_DIR, default the OS temp dir);
//  - recovery: the startup scan over 100 sessions / 10,000 journaled turns.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { applyRecovery, openJournal, planRecovery } from "../dist/index.js";

const benchRoot = mkdtempSync(join(process.env.TURN_JOURNAL_BENCH_DIR ?? tmpdir(), "turn-journal-bench-"));
let fileNumber = 0;
const freshPath = () => join(benchRoot, `bench-${++fileNumber}.sqlite`);

function time(work) {
  const started = process.hrtime.bigint();
  const result = work();
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, result };
}

const rate = (count, ms) => Math.round((count / ms) * 1000);

function streamEvent(index) {
  return index % 3 === 0
    ? { type: "assistant.delta", text: `token ${index} of a streamed answer ` }
    : { type: "reasoning", text: `thinking about step ${index} of the plan` };
}

function runningTurn(journal) {
  const session = journal.sessions.createSession({ backend: "claude" });
  const turn = journal.turns.submitTurn(session.id, { prompt: "benchmark" });
  journal.turns.transition(turn.id, { phase: "spawning" });
  journal.turns.transition(turn.id, { phase: "running", process: { pid: process.pid, startTime: "0" } });
  return turn;
}

function journalAppend({ events, synchronous, batch }) {
  const journal = openJournal({ path: freshPath(), synchronous, batch });
  try {
    const turn = runningTurn(journal);
    const { ms } = time(() => {
      for (let index = 0; index < events; index += 1)
        journal.events.appendEvents(turn.id, [streamEvent(index)]);
      journal.events.flush();
    });
    if (journal.turns.getTurn(turn.id).eventCount !== events + 3) throw new Error("append bench lost events");
    return { events, synchronous, batch, ms: Math.round(ms), eventsPerSecond: rate(events, ms) };
  } finally {
    journal.maintenance.close();
  }
}

function bareInsertLoop({ events, synchronous, rowsPerTransaction }) {
  const db = new Database(freshPath());
  try {
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${synchronous}`);
    db.exec(`CREATE TABLE events (turn_id TEXT NOT NULL, idx INTEGER NOT NULL, at INTEGER NOT NULL,
               type TEXT NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (turn_id, idx)) STRICT, WITHOUT ROWID`);
    const insert = db.prepare("INSERT INTO events VALUES (?, ?, ?, ?, ?)");
    const insertMany = db.transaction((from, to) => {
      for (let index = from; index < to; index += 1) {
        const event = streamEvent(index);
        insert.run("turn", index, Date.now(), event.type, JSON.stringify(event));
      }
    });
    const { ms } = time(() => {
      for (let from = 0; from < events; from += rowsPerTransaction) {
        insertMany.immediate(from, Math.min(events, from + rowsPerTransaction));
      }
    });
    return { events, synchronous, rowsPerTransaction, ms: Math.round(ms), eventsPerSecond: rate(events, ms) };
  } finally {
    db.close();
  }
}

/** 100 sessions x 100 turns: every turn ran and completed, except each session's last, left mid-turn. */
function seedRecoveryJournal(path, { sessions, turnsPerSession }) {
  const journal = openJournal({ path, synchronous: "NORMAL", batch: { maxEvents: 64, maxDelayMs: 1000 } });
  try {
    journal.maintenance.bumpGeneration();
    for (let sessionIndex = 0; sessionIndex < sessions; sessionIndex += 1) {
      const session = journal.sessions.createSession({
        backend: sessionIndex % 2 === 0 ? "claude" : "codex",
      });
      for (let turnIndex = 0; turnIndex < turnsPerSession; turnIndex += 1) {
        const turn = journal.turns.submitTurn(session.id, { prompt: `turn ${turnIndex}` });
        journal.turns.transition(turn.id, { phase: "spawning", conversationId: `conv-${session.id}` });
        journal.turns.transition(turn.id, {
          phase: "running",
          process: { pid: 1000 + turnIndex, startTime: "1" },
        });
        journal.events.appendEvents(turn.id, [
          { type: "reasoning", text: "planning" },
          { type: "usage", input: 1200, output: 80 },
        ]);
        const last = turnIndex === turnsPerSession - 1;
        if (last && sessionIndex % 3 === 0) break; // thinking only: replayed
        journal.events.appendEvents(turn.id, [{ type: "assistant.text", text: `answer ${turnIndex}` }]);
        if (last) break; // has effects: interrupted
        journal.turns.transition(turn.id, { phase: "completed" });
      }
    }
  } finally {
    journal.maintenance.close();
  }
}

function recoveryScan({ sessions, turnsPerSession }) {
  const path = freshPath();
  const seeded = time(() => seedRecoveryJournal(path, { sessions, turnsPerSession }));
  const opened = time(() => openJournal({ path }));
  const journal = opened.result;
  try {
    const generation = time(() => journal.maintenance.bumpGeneration());
    const scan = time(() => planRecovery(journal.turns.listNonTerminalTurns()));
    const applied = time(() => applyRecovery(journal, scan.result));
    const reattach = time(() =>
      journal.sessions.listSessions().map((session) => journal.turns.getCurrentTurn(session.id)),
    );
    const check = time(() => journal.maintenance.checkConsistency());
    if (check.result.length > 0)
      throw new Error(`recovery bench left problems: ${JSON.stringify(check.result)}`);
    const actions = {};
    for (const decision of scan.result) actions[decision.action] = (actions[decision.action] ?? 0) + 1;
    return {
      sessions,
      turns: sessions * turnsPerSession,
      unfinishedTurns: scan.result.length,
      actions,
      seedMs: Math.round(seeded.ms),
      openMs: +opened.ms.toFixed(2),
      bumpGenerationMs: +generation.ms.toFixed(2),
      scanAndPlanMs: +scan.ms.toFixed(2),
      applyMs: +applied.ms.toFixed(2),
      currentTurnOfEverySessionMs: +reattach.ms.toFixed(2),
      consistencyCheckMs: +check.ms.toFixed(2),
    };
  } finally {
    journal.maintenance.close();
  }
}

try {
  const probe = new Database(":memory:");
  const sqliteVersion = probe.prepare("SELECT sqlite_version()").pluck().get();
  probe.close();
  const batched = { maxEvents: 256, maxDelayMs: 50 };
  // The journal lives in a long-running daemon: both sides run once before they are measured, so the
  // figures are not V8 compiling the journal's, zod's and better-sqlite3's paths (reported apart).
  const warmUp = {
    journal: journalAppend({ events: 20_000, synchronous: "NORMAL", batch: batched }),
    bareInsert: bareInsertLoop({ events: 20_000, synchronous: "NORMAL", rowsPerTransaction: 256 }),
  };
  const append = {
    journalBatchedFull: journalAppend({ events: 100_000, synchronous: "FULL", batch: batched }),
    bareInsertBatchedFull: bareInsertLoop({
      events: 100_000,
      synchronous: "FULL",
      rowsPerTransaction: 256,
    }),
    journalBatchedNormal: journalAppend({ events: 100_000, synchronous: "NORMAL", batch: batched }),
    bareInsertBatchedNormal: bareInsertLoop({
      events: 100_000,
      synchronous: "NORMAL",
      rowsPerTransaction: 256,
    }),
    journalUnbatchedFull: journalAppend({ events: 2_000, synchronous: "FULL", batch: { maxEvents: 1 } }),
    bareInsertUnbatchedFull: bareInsertLoop({ events: 2_000, synchronous: "FULL", rowsPerTransaction: 1 }),
  };
  const share = (journal, bare) => Math.round((journal.eventsPerSecond / bare.eventsPerSecond) * 100) / 100;
  const batchedFullShare = share(append.journalBatchedFull, append.bareInsertBatchedFull);
  const results = {
    node: process.version,
    sqlite: sqliteVersion,
    dir: benchRoot,
    goal: { journalBatchedFullOfBareLoop: 0.5, measured: batchedFullShare, met: batchedFullShare >= 0.5 },
    ratios: {
      batchedFull: batchedFullShare,
      batchedNormal: share(append.journalBatchedNormal, append.bareInsertBatchedNormal),
      unbatchedFull: share(append.journalUnbatchedFull, append.bareInsertUnbatchedFull),
    },
    append,
    warmUp,
    recovery: recoveryScan({ sessions: 100, turnsPerSession: 100 }),
  };
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
} finally {
  rmSync(benchRoot, { recursive: true, force: true });
}
