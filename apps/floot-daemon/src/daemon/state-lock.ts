import Database from "better-sqlite3";

/** The exit code of a daemon that found the state dir locked by another one. */
export const stateDirLockedExitCode = 75;

export class StateDirLockedError extends Error {
  override readonly name = "StateDirLockedError";
}

export interface StateLock {
  readonly path: string;
  release(): void;
}

export interface ProcessStamp {
  pid: number;
  startTime: string;
}

/**
 * Takes the state dir's lock: an exclusive SQLite lock (an fcntl lock the kernel drops when its holder
 * dies, SIGKILL included) on `path`, held for the life of the process. A second daemon fails at once,
 * before it opens the journal or fences anything. The holder's pid and start time are written inside
 * for diagnostics only; the lock itself never goes stale.
 */
export function acquireStateLock(path: string, holder: ProcessStamp): StateLock {
  const db = new Database(path, { timeout: 0 });
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, start_time TEXT NOT NULL, since TEXT)");
    db.exec("DELETE FROM holder");
    db.prepare("INSERT INTO holder (pid, start_time, since) VALUES (?, ?, ?)").run(
      holder.pid,
      holder.startTime,
      new Date().toISOString(),
    );
    db.exec("COMMIT");
  } catch (error) {
    db.close();
    if (isBusy(error)) {
      throw new StateDirLockedError(`another floot daemon holds the state dir lock ${path}`);
    }
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
