import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { startWalCheckpointer } from "../src/checkpointer.js";
import { openJournal, type TurnJournal } from "../src/journal.js";
import { openSqlite } from "../src/sqlite.js";
import { tempDir } from "./helpers.js";

/**
 * Sessions in the database file alone (a copy without its WAL): what checkpoints copied there; none
 * while even the schema is only in the WAL.
 */
function sessionsInDatabaseFile(path: string): number {
  const copy = `${path}.copy`;
  copyFileSync(path, copy);
  const db = openSqlite(copy, { readonly: true });
  try {
    const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sessions'").get() !== undefined;
    return hasTable ? (db.prepare("SELECT count(*) FROM sessions").pluck().get() as number) : 0;
  } finally {
    db.close();
  }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 50) {
    if (waited > 15_000) throw new Error(`still not ${what} after 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function journalWithSessions(checkpoint: "inline" | "worker", sessions: number): TurnJournal {
  const journal = openJournal({ path: join(tempDir(), "journal.sqlite"), checkpoint });
  for (let index = 0; index < sessions; index += 1) journal.sessions.createSession({ backend: "claude" });
  return journal;
}

test("with checkpoint: worker, a worker thread copies the commits into the database file", async () => {
  const journal = journalWithSessions("worker", 50);
  expect(journal.maintenance.walCheckpoints()).toEqual({ mode: "worker", byWorker: 0 });
  // It starts 1 s after the first commit and checkpoints what is left 1 s after the last.
  await until(() => journal.maintenance.walCheckpoints().byWorker > 0, "checkpointed");
  expect(sessionsInDatabaseFile(journal.path)).toBe(50);
  // Its connection closes first: the journal's, the last, removes the WAL as it always did.
  journal.maintenance.close();
  expect(existsSync(`${journal.path}-wal`)).toBe(false);
}, 20_000);

test("inline, the same commits stay in the WAL until SQLite's threshold (so the worker did it above)", async () => {
  const journal = journalWithSessions("inline", 50);
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  expect(journal.maintenance.walCheckpoints()).toEqual({ mode: "inline", byWorker: 0 });
  expect(sessionsInDatabaseFile(journal.path)).toBe(0);
  journal.maintenance.close();
}, 20_000);

test("a journal closed before its worker started closes at once and whole", () => {
  const early = journalWithSessions("worker", 3);
  early.maintenance.close();
  expect(existsSync(`${early.path}-wal`)).toBe(false);
  expect(sessionsInDatabaseFile(early.path)).toBe(3);
});

test("a checkpointer closed while its worker starts stops it before the caller's connection closes", async () => {
  const journal = journalWithSessions("inline", 3);
  let failure: unknown;
  const checkpointer = startWalCheckpointer({
    path: journal.path,
    startDelayMs: 0,
    onError: (error) => {
      failure = error;
    },
    onFailure: () => {},
  });
  checkpointer.committed();
  // The start timer has fired: the worker thread exists and is loading.
  await new Promise((resolve) => setTimeout(resolve, 5));
  checkpointer.close();
  journal.maintenance.close();
  expect(failure).toBeUndefined();
  expect(checkpointer.failed).toBe(false);
  // Had the worker's connection outlived the journal's, the WAL would still be there.
  expect(existsSync(`${journal.path}-wal`)).toBe(false);
  expect(sessionsInDatabaseFile(journal.path)).toBe(3);
}, 20_000);

test("a worker that cannot start reports why, and its caller is told to checkpoint inline again", async () => {
  const errors: unknown[] = [];
  let failedOver = false;
  const checkpointer = startWalCheckpointer({
    path: join(tempDir(), "absent.sqlite"),
    startDelayMs: 0,
    sqliteModule: join(tempDir(), "no-such-module.js"),
    onError: (error) => errors.push(error),
    onFailure: () => {
      failedOver = true;
    },
  });
  checkpointer.committed();
  await until(() => checkpointer.failed, "failed");
  expect(failedOver).toBe(true);
  expect(String(errors[0])).toMatch(/no-such-module/);
  checkpointer.close();
}, 20_000);

test("an unknown checkpoint mode is refused by name", () => {
  expect(() =>
    openJournal({ path: join(tempDir(), "journal.sqlite"), checkpoint: "sometimes" as "inline" }),
  ).toThrow(/checkpoint: must be inline or worker, got sometimes/);
});
