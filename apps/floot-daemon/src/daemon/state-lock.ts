import { openSqlite } from "@bridgeworks/turn-journal";

/** The exit code of a daemon that found the state dir locked by another one. */
export const stateDirLockedExitCode = 75;

export class StateDirLockedError extends Error {
  override readonly name = "StateDirLockedError";
}

export interface StateLock {
  readonly path: string;
  release(): void;
}

export interface StateLockOptions {
  /**
   * How long a busy lock is retried before the state dir counts as held. Two daemons starting at once
   * can each make the other's first attempt fail (one holds SQLite's shared lock while the other needs
   * the exclusive one), so a single attempt could leave neither running. A live holder never lets go,
   * so retrying only costs a refused daemon this long.
   */
  contentionWindowMs?: number;
  now?: () => number;
  sleep?: (ms: number) => void;
  random?: () => number;
}

const defaultContentionWindowMs = 500;

/**
 * Takes the state dir's lock: an exclusive SQLite lock (an fcntl lock the kernel drops when its holder
 * dies, SIGKILL included) on `path`, held for the life of the process. A second daemon fails within the
 * contention window, before it opens the journal or fences anything. The lock never goes stale.
 */
export function acquireStateLock(path: string, options: StateLockOptions = {}): StateLock {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? blockFor;
  const random = options.random ?? Math.random;
  const deadline = now() + (options.contentionWindowMs ?? defaultContentionWindowMs);
  for (;;) {
    const lock = tryAcquire(path);
    if (lock) return lock;
    if (now() >= deadline) {
      throw new StateDirLockedError(`another floot daemon holds the state dir lock ${path}`);
    }
    // Jitter, so two contenders that collided do not collide again in step.
    sleep(5 + Math.floor(random() * 20));
  }
}

function tryAcquire(path: string): StateLock | undefined {
  const db = openSqlite(path, { timeout: 0 });
  try {
    // A transaction that writes nothing and never ends holds the exclusive lock until the connection
    // closes; its rollback journal in memory, a start writes and fsyncs nothing here. The file holds no
    // data: daemon.json names the daemon once it is ready.
    db.pragma("journal_mode = MEMORY");
    db.exec("BEGIN EXCLUSIVE");
  } catch (error) {
    // Closing drops every lock this attempt took, so a contender it blocked can proceed.
    db.close();
    if (isBusy(error)) return undefined;
    throw error;
  }
  return {
    path,
    release() {
      if (db.open) db.close();
    },
  };
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED";
}

/** Blocks the thread for `ms`: the lock is taken at start-up, before anything is served. */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
