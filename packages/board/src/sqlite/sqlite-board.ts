import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import type { ActionPage } from "@bridgeworks/protocol";
import Database from "better-sqlite3";
import { parseIntegerArgument } from "../arguments.js";
import type { Board, BoardDeps } from "../board.js";
import { boardDeps, type StoreRunner, type StoreWaitInput, storeBoard } from "../board-core.js";
import { argumentError, BoardError } from "../errors.js";
import { requireObject } from "../rules.js";
import type { Awaitable, Store } from "../store.js";
import { waitForRecords } from "../wait.js";
import { ChangeFeed } from "./change-feed.js";
import { migrate } from "./schema.js";
import { SqliteStore } from "./store.js";

export interface SqliteBoardOptions extends Partial<BoardDeps> {
  /** Absolute path of the board file; see `resolveBoardLocation`. Parent dirs are created 0700. */
  path: string;
  /** How long a write waits for another process's write lock before failing `busy`. Default 5000. */
  busyTimeoutMs?: number;
  /** The safety re-check for waiters, in case a wake-up is missed. Default 1000. */
  recheckIntervalMs?: number;
}

/** Opens (creating and migrating as needed) the SQLite board shared by every bridge on the machine. */
export async function openSqliteBoard(options: SqliteBoardOptions): Promise<Board> {
  requireObject(options, "options");
  const path = options.path;
  if (typeof path !== "string" || !isAbsolute(path))
    throw argumentError("path", "must be an absolute file path");
  const busyTimeoutMs = parseIntegerArgument(options.busyTimeoutMs ?? 5000, "busyTimeoutMs", 0, 600_000);
  const recheckIntervalMs = parseIntegerArgument(
    options.recheckIntervalMs ?? 1000,
    "recheckIntervalMs",
    1,
    3_600_000,
  );
  const deps = boardDeps(options);

  createParentDirs(dirname(path));
  createPrivately(path);
  const notifyPath = `${path}-notify`;
  createPrivately(notifyPath);
  const eventsPath = `${path}-events`;
  createPrivately(eventsPath);

  const db = translateSqliteErrors(() => {
    const opened = new Database(path, { timeout: busyTimeoutMs });
    try {
      const mode = opened.pragma("journal_mode = WAL", { simple: true });
      if (mode !== "wal") {
        throw new BoardError(
          "incompatible_store",
          `the board file cannot use WAL (journal mode ${String(mode)})`,
        );
      }
      opened.pragma("synchronous = NORMAL");
      migrate(opened, deps.randomBytes);
      return opened;
    } catch (error) {
      opened.close();
      throw error;
    }
  });
  const store = new SqliteStore(db);
  const changes = new ChangeFeed({ notifyPath, eventsPath, readHead: () => store.head(), recheckIntervalMs });
  return storeBoard(
    new SqliteRunner(db, store, changes),
    deps,
    translateSqliteErrors(() => store.boardId()),
  );
}

/** SQLite creates the file and its `-wal`/`-shm` with the file's mode; make that owner-only. */
function createPrivately(path: string): void {
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

/** Runs the core's questions on one connection: reads as they come, each write in one immediate transaction. */
class SqliteRunner implements StoreRunner {
  readonly noun = "board file";
  readonly #db: Database.Database;
  readonly #store: SqliteStore;
  readonly #changes: ChangeFeed;

  constructor(db: Database.Database, store: SqliteStore, changes: ChangeFeed) {
    this.#db = db;
    this.#store = store;
    this.#changes = changes;
  }

  async read<T>(operation: (store: Store) => Promise<T>): Promise<T> {
    try {
      return await operation(this.#store);
    } catch (error) {
      throw translateSqliteError(error);
    }
  }

  /** When the write changed something, wakes the waiters for it here and in other processes. */
  async write<T>(operation: (store: Store) => Awaitable<T>): Promise<T> {
    this.#store.takeChange();
    const result = translateSqliteErrors(() =>
      this.#db
        .transaction(() => {
          const answer = operation(this.#store);
          if (answer instanceof Promise)
            throw new Error("a SQLite write must not wait inside its transaction");
          return answer;
        })
        .immediate(),
    );
    const change = this.#store.takeChange();
    if (change !== "none") this.#changes.announce(change === "claimable" ? "claimable" : "every");
    return result;
  }

  wait(input: StoreWaitInput): Promise<ActionPage> {
    return waitForRecords({ ...input, changes: this.#changes });
  }

  async close(): Promise<void> {
    this.#changes.close();
    this.#db.close();
  }
}

export function translateSqliteErrors<T>(operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    throw translateSqliteError(error);
  }
}

/** SQLITE_BUSY and SQLITE_LOCKED (with their extended codes) mean another writer held on too long. */
function translateSqliteError(error: unknown): unknown {
  if (error instanceof Database.SqliteError && /^SQLITE_(BUSY|LOCKED)/.test(error.code)) {
    return new BoardError("busy", `the board file is busy (${error.code}); retry`, { cause: error });
  }
  return error;
}

/**
 * mkdir -p with mode 0700, one level at a time: Node 20's recursive mkdirSync never returns for a
 * path under /proc, and a folder that cannot be made must be a clear error naming `path`.
 */
function createParentDirs(dir: string): void {
  const missing: string[] = [];
  for (let current = dir; !existsSync(current); current = dirname(current)) missing.unshift(current);
  for (const folder of missing) {
    try {
      mkdirSync(folder, { mode: 0o700 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EEXIST") continue;
      throw argumentError("path", `cannot create the board's folder ${folder} (${code ?? String(error)})`);
    }
  }
}
