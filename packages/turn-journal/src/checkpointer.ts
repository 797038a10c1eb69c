import { createRequire } from "node:module";
import type { Worker } from "node:worker_threads";
import { sqliteAddonPath } from "./sqlite.js";

/**
 * Copies a WAL database's committed pages back into it (a PASSIVE checkpoint) from a worker thread with
 * a connection of its own, so the committing thread never copies pages nor waits for the database
 * file's fsync. SQLite's own checkpoint runs in whichever commit crosses its threshold: under a stream
 * of commits, a stall of about 10 ms every half second for whoever waits on that thread.
 */
export interface WalCheckpointer {
  /** Counts a commit; the worker checkpoints after `commitsPerCheckpoint` of them, or `idleMs` after. */
  committed(): void;
  /** Checkpoints the worker has run. */
  readonly checkpoints: number;
  /** The worker failed (its error went to `onError`, then `onFailure` ran); nothing more is counted. */
  readonly failed: boolean;
  /** Stops the worker and closes its connection, waiting for that at most `stopTimeoutMs`. */
  close(): void;
}

export interface WalCheckpointerOptions {
  /** The database file (in WAL mode). */
  path: string;
  /** What the caller does once the worker failed: checkpoint inline again. */
  onFailure: () => void;
  onError: (error: unknown) => void;
  /** 256 */
  commitsPerCheckpoint?: number;
  /** A checkpoint also runs this long after commits that did not reach `commitsPerCheckpoint` (1 s). */
  idleMs?: number;
  /**
   * The worker starts this long after the first commit (1 s): a thread's start costs a process start
   * (a daemon's restart) tens of milliseconds on a small machine.
   */
  startDelayMs?: number;
  /** 10 s */
  stopTimeoutMs?: number;
  /** better-sqlite3's entry module; the installed one by default. */
  sqliteModule?: string;
}

/** The slots of the state shared with the worker (an Int32Array on a SharedArrayBuffer). */
const slot = { commits: 0, wake: 1, stop: 2, stopped: 3, checkpoints: 4 } as const;

interface WorkerInput {
  state: Int32Array;
  slot: typeof slot;
  path: string;
  sqliteModule: string;
  nativeBinding: string | undefined;
  idleMs: number;
}

/**
 * The worker's whole program, run from its source text (`eval`): a bundle that inlines this package has
 * no file of it to start. It may use only its argument and globals.
 */
function checkpointLoop(load: (id: string) => unknown): void {
  const { workerData } = load("node:worker_threads") as { workerData: WorkerInput };
  const { state, slot, path, sqliteModule, nativeBinding, idleMs } = workerData;
  let db: { pragma(source: string): unknown; close(): void } | undefined;
  try {
    const Database = load(sqliteModule) as new (path: string, options: object) => NonNullable<typeof db>;
    db = new Database(path, { fileMustExist: true, ...(nativeBinding && { nativeBinding }) });
    // The checkpoint fsyncs the WAL before it copies and the database file after.
    db.pragma("synchronous = FULL");
    let checkpointedAt = 0;
    while (Atomics.load(state, slot.stop) === 0) {
      const signal = Atomics.load(state, slot.wake);
      const commits = Atomics.load(state, slot.commits);
      if (commits !== checkpointedAt) {
        db.pragma("wal_checkpoint(PASSIVE)");
        checkpointedAt = commits;
        Atomics.add(state, slot.checkpoints, 1);
      }
      Atomics.wait(state, slot.wake, signal, idleMs);
    }
  } finally {
    db?.close();
    Atomics.store(state, slot.stopped, 1);
    Atomics.notify(state, slot.stopped);
  }
}

const requireFromHere = createRequire(import.meta.url);

export function startWalCheckpointer(options: WalCheckpointerOptions): WalCheckpointer {
  const commitsPerCheckpoint = options.commitsPerCheckpoint ?? 256;
  const state = new Int32Array(
    new SharedArrayBuffer(Object.keys(slot).length * Int32Array.BYTES_PER_ELEMENT),
  );
  let worker: Worker | undefined;
  let startTimer: NodeJS.Timeout | undefined;
  let failed = false;
  let closed = false;

  const fail = (error: unknown) => {
    if (failed || closed) return;
    failed = true;
    options.onFailure();
    options.onError(error);
  };
  const start = () => {
    startTimer = undefined;
    const input: WorkerInput = {
      state,
      slot,
      path: options.path,
      sqliteModule: options.sqliteModule ?? requireFromHere.resolve("better-sqlite3"),
      nativeBinding: sqliteAddonPath(),
      idleMs: options.idleMs ?? 1000,
    };
    // Loaded when first needed: importing worker_threads costs every start of a process a few ms.
    const { Worker } = requireFromHere("node:worker_threads") as typeof import("node:worker_threads");
    worker = new Worker(`(${checkpointLoop.toString()})(require)`, { eval: true, workerData: input });
    // Never what keeps a process alive: `close()` ends it.
    worker.unref();
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`the WAL checkpoint worker exited (code ${code})`)));
  };
  const wake = () => {
    Atomics.add(state, slot.wake, 1);
    Atomics.notify(state, slot.wake);
  };

  return {
    committed() {
      if (failed || closed) return;
      const commits = Atomics.add(state, slot.commits, 1) + 1;
      if (worker === undefined && startTimer === undefined) {
        startTimer = setTimeout(start, options.startDelayMs ?? 1000);
        startTimer.unref();
      }
      if (commits % commitsPerCheckpoint === 0) wake();
    },
    get checkpoints() {
      return Atomics.load(state, slot.checkpoints);
    },
    get failed() {
      return failed;
    },
    close() {
      if (closed) return;
      closed = true;
      clearTimeout(startTimer);
      if (worker === undefined) return;
      Atomics.store(state, slot.stop, 1);
      wake();
      // Its connection closes before the caller's: the last connection to close removes the WAL.
      Atomics.wait(state, slot.stopped, 0, options.stopTimeoutMs ?? 10_000);
    },
  };
}
