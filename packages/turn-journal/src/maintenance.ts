import { type ConsistencyProblem, findConsistencyProblems } from "./consistency.js";
import { JournalArea } from "./journal-area.js";
import type { Synchronous } from "./options.js";
import { bridgeGeneration } from "./records.js";

/**
 * What keeps the journal itself: the bridge generation, durability (deferred commits and the group
 * commit that makes them durable), WAL checkpoints, the consistency check, and closing. Recovery after a
 * restart is `recovery.ts`, over the turns and secrets.
 */
export class JournalMaintenance extends JournalArea {
  bridgeGeneration(): number {
    return bridgeGeneration(this.connection);
  }

  /** Bumps and commits the bridge generation; the daemon calls it once at each start, before any turn. */
  bumpGeneration(): number {
    return this.connection.transaction(() => {
      this.connection.sql.bumpGeneration.run();
      return bridgeGeneration(this.connection);
    });
  }

  /**
   * Runs `work` with its commits at `synchronous=NORMAL`: none waits for an fsync of its own, and the
   * journal's next `FULL` commit fsyncs them all (in WAL mode one fsync covers every earlier commit).
   * Only for commits whose loss to a power failure is harmless until then, such as recovery's one-turn
   * commits at start-up, made durable by the generation bump before any turn runs, or whose caller
   * awaits `sync()` before it acts on them. Buffered events are committed first, at `streamSynchronous`.
   */
  deferDurability<T>(work: () => T): T {
    this.buffer.flushStream();
    return this.connection.withSynchronous("NORMAL", work);
  }

  /**
   * Resolves once everything recorded so far is on disk, buffered events committed first: an
   * fdatasync of the WAL on libuv's thread pool, shared by the calls made while one runs (group
   * commit). A commit made under `deferDurability` and then awaited here is as durable as a FULL one
   * before its caller acts on it, and a burst of them costs the event loop no fsync.
   */
  sync(): Promise<void> {
    try {
      this.buffer.flushStream();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.connection.syncWal();
  }

  /** What this connection actually runs with, read back from SQLite. */
  durability(): { journalMode: string; synchronous: Synchronous } {
    return this.connection.durability();
  }

  /** Who checkpoints the WAL now (`inline` again if the worker failed), and the worker's checkpoints so far. */
  walCheckpoints(): { mode: "inline" | "worker"; byWorker: number } {
    return this.connection.walCheckpoints();
  }

  /** Flushes, then checks SQLite integrity and the journal's own invariants; empty means consistent. */
  checkConsistency(): ConsistencyProblem[] {
    this.buffer.flush();
    return findConsistencyProblems(this.connection.db);
  }

  /** Flushes buffered events and closes the database. */
  close(): void {
    if (!this.connection.open) return;
    try {
      this.buffer.flush();
    } finally {
      this.buffer.close();
      this.connection.close();
    }
  }
}
