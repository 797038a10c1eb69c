import type Database from "better-sqlite3";
import type { ChangeFeed } from "./change-feed.js";
import { startWalCheckpointer, type WalCheckpointer } from "./checkpointer.js";
import { type Clock, systemClock } from "./clock.js";
import { createUuidV7Generator } from "./ids.js";
import { migrate } from "./migrations.js";
import { durabilityModes, type JournalOptions, type Synchronous } from "./options.js";
import { type PermissionStatements, preparePermissionStatements } from "./permission-rows.js";
import { openSqlite } from "./sqlite.js";
import { prepareStatements, type Statements } from "./statements.js";
import { WalSync } from "./wal-sync.js";

/** SQLite's default `wal_autocheckpoint`, in WAL pages. */
const inlineCheckpointPages = 1000;
/** With a worker checkpointing, SQLite's own checkpoint is only a backstop. */
const backstopCheckpointPages = 10_000;

/**
 * The journal's one SQLite connection (WAL, migrated, every statement prepared), its clock and ids, and
 * the one way every area changes it: `transaction`, which tells the change feed after the commit.
 */
export class JournalConnection {
  readonly path: string;
  readonly db: Database.Database;
  readonly sql: Statements;
  readonly permissionSql: PermissionStatements;
  readonly clock: Clock;
  readonly newId: () => string;
  readonly synchronous: Synchronous;
  readonly streamSynchronous: Synchronous;
  readonly feed: ChangeFeed;
  readonly #onError: (error: unknown) => void;
  readonly #walSync: WalSync;
  #checkpointer: WalCheckpointer | undefined;

  constructor(options: JournalOptions, feed: ChangeFeed, onError: (error: unknown) => void) {
    const { synchronous, streamSynchronous } = durabilityModes(options);
    this.path = options.path;
    this.clock = options.clock ?? systemClock;
    this.newId = options.newId ?? createUuidV7Generator(() => this.clock.now());
    this.synchronous = synchronous;
    this.streamSynchronous = streamSynchronous;
    this.feed = feed;
    this.#onError = onError;
    this.db = openSqlite(options.path, { timeout: 5000 });
    try {
      this.db.pragma("journal_mode = WAL");
      this.db.pragma(`synchronous = ${synchronous}`);
      this.db.pragma("foreign_keys = ON");
      migrate(this.db);
      this.sql = prepareStatements(this.db);
      this.permissionSql = preparePermissionStatements(this.db);
      this.#walSync = new WalSync({ path: options.path });
      if (options.checkpoint === "worker") this.#startCheckpointer();
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  get open(): boolean {
    return this.db.open;
  }

  /** Runs `work` in one IMMEDIATE transaction; listeners hear of it only once the outermost one committed. */
  transaction<T>(work: () => T): T {
    const outermost = !this.db.inTransaction;
    let result: T;
    try {
      // IMMEDIATE takes the write lock up front: no deadlock upgrading a read to a write.
      result = this.db.transaction(work).immediate();
    } catch (error) {
      this.feed.rolledBack(outermost);
      throw error;
    }
    if (outermost) {
      this.#checkpointer?.committed();
      this.feed.committed();
    }
    return result;
  }

  /** Runs `work` with `synchronous=mode` on this connection, whatever the journal was opened with. */
  withSynchronous<T>(mode: Synchronous, work: () => T): T {
    if (this.synchronous === mode) return work();
    // Set per call, never as a prepared statement run again: SQLite applies this pragma when the
    // statement is prepared, so a rerun of one prepared earlier changes nothing.
    this.db.pragma(`synchronous = ${mode}`);
    try {
      return work();
    } finally {
      this.db.pragma(`synchronous = ${this.synchronous}`);
    }
  }

  /** An fdatasync of the WAL that began after the call (group commit, `src/wal-sync.ts`). */
  syncWal(): Promise<void> {
    return this.#walSync.sync();
  }

  /** What this connection actually runs with, read back from SQLite. */
  durability(): { journalMode: string; synchronous: Synchronous } {
    const synchronous = this.db.pragma("synchronous", { simple: true }) === 2 ? "FULL" : "NORMAL";
    return { journalMode: String(this.db.pragma("journal_mode", { simple: true })), synchronous };
  }

  /** Who checkpoints the WAL now (`inline` again if the worker failed), and the worker's checkpoints so far. */
  walCheckpoints(): { mode: "inline" | "worker"; byWorker: number } {
    const worker = this.#checkpointer;
    return { mode: worker && !worker.failed ? "worker" : "inline", byWorker: worker?.checkpoints ?? 0 };
  }

  /** Stops the checkpointer (its connection closes first), the WAL sync, then the connection. */
  close(): void {
    this.#checkpointer?.close();
    this.#walSync.close();
    this.db.close();
  }

  #startCheckpointer(): void {
    this.db.pragma(`wal_autocheckpoint = ${backstopCheckpointPages}`);
    this.#checkpointer = startWalCheckpointer({
      path: this.path,
      onError: this.#onError,
      onFailure: () => {
        if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${inlineCheckpointPages}`);
      },
    });
  }
}
