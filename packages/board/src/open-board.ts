import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { Board, BoardDeps } from "./board.js";
import { argumentError } from "./errors.js";
import { isPostgresLocation } from "./location.js";
import { clientConfig, parsePostgresLocation, translatePostgresError } from "./postgres/connection.js";
import { openPostgresBoard } from "./postgres/postgres-board.js";
import { migratePostgres } from "./postgres/schema.js";
import { requireObject } from "./rules.js";
import { schemaVersion as sqliteSchemaVersion } from "./sqlite/schema.js";
import { openSqliteBoard, translateSqliteErrors } from "./sqlite/sqlite-board.js";

export interface OpenBoardOptions extends Partial<BoardDeps> {
  /** The safety re-check for waiters, in case a wake-up is missed (SQLite default 1000, PostgreSQL 5000). */
  recheckIntervalMs?: number;
  /** SQLite only: how long a write waits for another process's lock before a retryable `busy`. */
  busyTimeoutMs?: number;
}

export type BoardStore = "sqlite" | "postgres";

/** `postgres` for a `postgres://` or `postgresql://` URL, `sqlite` for an absolute file path. */
export function boardStoreOf(location: string): BoardStore {
  if (typeof location !== "string" || location === "") {
    throw argumentError("location", "must be an absolute file path or a postgres:// URL");
  }
  if (isPostgresLocation(location)) return "postgres";
  if (!isAbsolute(location)) {
    throw argumentError("location", "must be an absolute file path or a postgres:// URL");
  }
  return "sqlite";
}

/**
 * Opens the board at `location` (see `resolveBoardLocation`): the SQLite file every bridge on one
 * machine shares, or the PostgreSQL database a team's machines share. The caller never needs to know which.
 */
export async function openBoard(location: string, options: OpenBoardOptions = {}): Promise<Board> {
  requireObject(options, "options");
  if (boardStoreOf(location) === "sqlite") return openSqliteBoard({ ...options, path: location });
  const { busyTimeoutMs: _sqliteOnly, ...postgresOptions } = options;
  return openPostgresBoard({ ...postgresOptions, url: location });
}

export interface BoardMigration {
  store: BoardStore;
  /** The schema version found; 0 for a store the board had never used. */
  previousVersion: number;
  schemaVersion: number;
}

/**
 * Creates or migrates the board's schema at `location` and reports the versions (`bee board migrate`).
 * Opening a board does the same on first use; this lets an administrator do it ahead of time.
 */
export async function migrateBoard(location: string): Promise<BoardMigration> {
  if (boardStoreOf(location) === "postgres") {
    const { connectionString, schema } = parsePostgresLocation(location, "location");
    const client = new pg.Client(
      clientConfig({
        connectionString,
        applicationName: "bee-board-migrate",
        connectTimeoutMs: 10_000,
      }),
    );
    // A drop after the answer is of no interest; without a listener it would crash the process.
    client.on("error", () => {});
    try {
      await client.connect();
      const result = await migratePostgres(client, schema, randomBytes);
      return { store: "postgres", ...result };
    } catch (error) {
      throw translatePostgresError(error);
    } finally {
      await client.end().catch(() => {});
    }
  }
  const previousVersion = existsSync(location) ? readSqliteVersion(location) : 0;
  const board = await openSqliteBoard({ path: location });
  await board.close();
  return { store: "sqlite", previousVersion, schemaVersion: sqliteSchemaVersion };
}

function readSqliteVersion(path: string): number {
  return translateSqliteErrors(() => {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      return db.pragma("user_version", { simple: true }) as number;
    } finally {
      db.close();
    }
  });
}
