import type { ActionPage } from "@bridgeworks/protocol";
import pg from "pg";
import { parseIntegerArgument } from "../arguments.js";
import type { Board, BoardDeps } from "../board.js";
import { boardDeps, type StoreRunner, type StoreWaitInput, storeBoard } from "../board-core.js";
import { argumentError, BoardError } from "../errors.js";
import { requireObject } from "../rules.js";
import type { Awaitable, Store } from "../store.js";
import { type ChangeSource, waitForRecords } from "../wait.js";
import { PostgresChangeFeed } from "./change-feed.js";
import {
  type ConnectionSettings,
  clientConfig,
  isTransient,
  parsePostgresLocation,
  translatePostgresError,
} from "./connection.js";
import { migratePostgres } from "./schema.js";
import { PostgresStatements } from "./statements.js";
import { PostgresStore, type Queryable } from "./store.js";

export interface PostgresBoardOptions extends Partial<BoardDeps> {
  /**
   * `postgres://user:password@host:port/database` (or `postgresql://`). The board lives in schema
   * `bee`, or in the one a `?schema=` parameter names.
   */
  url: string;
  /** The safety re-check for waiters, in case a notification is missed. Default 5000. */
  recheckIntervalMs?: number;
  /**
   * Connections for reads and writes (the LISTEN connection is one more). Default 2: a bee makes one
   * call at a time beside its wait's scans, and writers queue on the board's row lock in the server
   * whatever the number, so more connections per process would only hold more server backends.
   */
  maxConnections?: number;
  /** How long opening a connection may take before it fails `busy`. Default 5000. */
  connectTimeoutMs?: number;
  /** How long the LISTEN connection stays open after the last wait, ready for the next. Default 30000. */
  listenerLingerMs?: number;
}

/**
 * Opens the board a team shares on a PostgreSQL server, creating or migrating its schema (`bee`) on
 * first use. Losing the server makes operations fail `busy` (retryable) until it is back; waits ride
 * out a restart within their bound.
 */
export async function openPostgresBoard(options: PostgresBoardOptions): Promise<Board> {
  requireObject(options, "options");
  if (typeof options.url !== "string") throw argumentError("url", "must be a postgres:// URL");
  const location = parsePostgresLocation(options.url, "url");
  const settings: ConnectionSettings = {
    connectionString: location.connectionString,
    applicationName: "bee-board",
    connectTimeoutMs: parseIntegerArgument(options.connectTimeoutMs ?? 5000, "connectTimeoutMs", 1, 600_000),
  };
  const recheckIntervalMs = parseIntegerArgument(
    options.recheckIntervalMs ?? 5000,
    "recheckIntervalMs",
    1,
    3_600_000,
  );
  const maxConnections = parseIntegerArgument(options.maxConnections ?? 2, "maxConnections", 1, 100);
  const lingerMs = parseIntegerArgument(options.listenerLingerMs ?? 30_000, "listenerLingerMs", 0, 3_600_000);
  const deps = boardDeps(options);

  const pool = new pg.Pool({
    ...clientConfig(settings),
    max: maxConnections,
    idleTimeoutMillis: 10_000,
    // Idle connections never keep node alive; an open board with no work in flight holds no handles.
    allowExitOnIdle: true,
  });
  // An idle connection the server dropped (a restart): the pool discards it and opens another on demand.
  pool.on("error", () => {});

  const statements = new PostgresStatements(location.schema);
  let boardId: string;
  try {
    const client = await pool.connect();
    // A drop while it is checked out fails the query in flight; without a listener it would also crash node.
    client.on("error", ignoreDrop);
    let broken: Error | undefined;
    try {
      await migratePostgres(client, location.schema, deps.randomBytes);
      boardId = await new PostgresStore(queryable(client), statements).boardId();
    } catch (error) {
      if (isTransient(error)) broken = error as Error;
      throw error;
    } finally {
      client.removeListener("error", ignoreDrop);
      client.release(broken);
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw translatePostgresError(error);
  }

  const changes = new PostgresChangeFeed({
    newClient: (onSocket) =>
      new pg.Client(clientConfig({ ...settings, applicationName: "bee-board-listener" }, onSocket)),
    channel: location.channel,
    eventsChannel: location.eventsChannel,
    recheckIntervalMs,
    lingerMs,
    reconnectDelayMs: backoff,
  });
  return storeBoard(new PostgresRunner({ pool, changes, statements }), deps, boardId);
}

/**
 * A connection that drops while checked out fails the queries in flight, which is how the caller
 * learns of it; pg also emits `error` on the client, which must not crash the process.
 */
function ignoreDrop(): void {}

/** 50 ms, doubling to at most a second: a restarted server is back within a few tries. */
function backoff(attempt: number): number {
  return Math.min(1000, 50 * 2 ** attempt);
}

/** A pool or a client as the store's `Queryable`: one statement in, its result out. */
function queryable(db: pg.Pool | pg.PoolClient): Queryable {
  return { query: (config) => db.query(config) };
}

/**
 * Runs the core's questions on pooled connections, one statement each. A write is one call of its
 * function, so its whole transaction (the board's row lock, the change, the NOTIFY when it made an
 * action claimable) runs in the server in one round trip, and the lock is held only for the
 * server's own work, never for a round trip to a client.
 */
class PostgresRunner implements StoreRunner {
  readonly noun = "board database";
  readonly #pool: pg.Pool;
  readonly #changes: PostgresChangeFeed;
  readonly #statements: PostgresStatements;

  constructor(input: { pool: pg.Pool; changes: PostgresChangeFeed; statements: PostgresStatements }) {
    this.#pool = input.pool;
    this.#changes = input.changes;
    this.#statements = input.statements;
  }

  /** Turns a lost server into `busy`. */
  async read<T>(operation: (store: Store) => Promise<T>): Promise<T> {
    try {
      return await operation(new PostgresStore(queryable(this.#pool), this.#statements));
    } catch (error) {
      throw translatePostgresError(error);
    }
  }

  /**
   * A write the server refused was rolled back; one whose connection broke after it was sent may
   * or may not have committed, and says so (`unsure`).
   */
  async write<T>(operation: (store: Store) => Awaitable<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw translatePostgresError(error);
    }
    client.on("error", ignoreDrop);
    const store = new PostgresStore(queryable(client), this.#statements);
    let broken: Error | undefined;
    try {
      const result = await operation(store);
      const change = store.change;
      if (change !== undefined) this.#changes.announce(change.head, change.scope);
      return result;
    } catch (error) {
      const refused = error instanceof pg.DatabaseError;
      if (isTransient(error)) broken = error as Error;
      throw translatePostgresError(error, !refused);
    } finally {
      client.removeListener("error", ignoreDrop);
      // A connection that failed is destroyed rather than handed to the next caller.
      client.release(broken);
    }
  }

  /**
   * A scan that fails because the server went away is tried again, after a pause or when the
   * LISTEN connection is back, from the same position: the wait rides out a restart. Only a wait
   * whose bound passes while the server is still away reports it, as a retryable `busy`.
   */
  async wait(input: StoreWaitInput): Promise<ActionPage> {
    let trouble: unknown;
    let failures = 0;
    let retry: NodeJS.Timeout | undefined;
    let wake: ((head?: number) => void) | undefined;
    const changes: ChangeSource = {
      subscribe: (listener, scope) => {
        wake = listener;
        const unsubscribe = this.#changes.subscribe(listener, scope);
        return () => {
          unsubscribe();
          clearTimeout(retry);
          wake = undefined;
        };
      },
    };
    const page = await waitForRecords({
      ...input,
      changes,
      scan: async (after) => {
        try {
          const found = await input.scan(after);
          trouble = undefined;
          failures = 0;
          return found;
        } catch (error) {
          if (!(error instanceof BoardError && error.code === "busy")) throw error;
          trouble = error;
          clearTimeout(retry);
          retry = setTimeout(() => wake?.(), backoff(failures++));
          return { records: [], position: after };
        }
      },
    });
    if (page.records.length === 0 && trouble !== undefined) {
      throw new BoardError(
        "busy",
        "the board's PostgreSQL server was unreachable until the wait's timeout; retry with the same cursor",
        { cause: trouble },
      );
    }
    return page;
  }

  /**
   * Idle connections are unref'd (they never keep node alive), so ending them alone would let node
   * exit before close() settles when nothing else is left to do: a timer holds it open meanwhile.
   */
  async close(): Promise<void> {
    const holdOpen = setInterval(() => {}, 60_000);
    try {
      await this.#changes.close();
      await this.#pool.end();
    } finally {
      clearInterval(holdOpen);
    }
  }
}
