import { Socket } from "node:net";
import pg from "pg";
import { argumentError, BoardError } from "../errors.js";
import { redactBoardLocation } from "../location.js";

const defaultSchema = "bee";
const schemaName = /^[a-z_][a-z0-9_]{0,47}$/;

/** Where a board lives on a server, parsed from its `postgres://` location. */
export interface PostgresLocation {
  /** The URL as pg reads it, without the board's own `schema` parameter. */
  connectionString: string;
  /** The schema holding the board's tables: `?schema=` in the URL, `bee` by default. */
  schema: string;
  /** The channel every write that makes an action claimable notifies, with the board's new head as payload. */
  channel: string;
  /** The channel every other change notifies (claims, completes, identities), for live views. */
  eventsChannel: string;
}

const int8Oid = 20;

/**
 * Board positions and epoch milliseconds are int8 columns well inside 2^53, so read them as numbers.
 * Set per connection, never on pg's global type registry, which other code in the process may use.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === int8Oid && format !== "binary"
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};

/**
 * Parses a `postgres://` URL, refusing a malformed one by name without echoing its password. A
 * `schema` query parameter puts the board in that schema, so one database can hold several boards.
 */
export function parsePostgresLocation(location: string, argument: string): PostgresLocation {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw argumentError(argument, `is not a valid postgres:// URL: ${redactBoardLocation(location)}`);
  }
  const schema = url.searchParams.get("schema") ?? defaultSchema;
  if (!schemaName.test(schema)) {
    throw argumentError(
      argument,
      `schema must be 1 to 48 lowercase letters, digits or _, starting with a letter or _; got ${JSON.stringify(schema)}`,
    );
  }
  url.searchParams.delete("schema");
  return {
    connectionString: url.toString(),
    schema,
    channel: boardChannel(schema),
    eventsChannel: eventsChannel(schema),
  };
}

/** The board's NOTIFY channel: NOTIFY is per database, so it carries the schema's name. */
export function boardChannel(schema: string): string {
  return `${schema}_board_changes`;
}

/** The channel of every change that makes nothing claimable; a schema name is at most 48 characters. */
export function eventsChannel(schema: string): string {
  return `${schema}_board_events`;
}

export interface ConnectionSettings {
  connectionString: string;
  applicationName: string;
  connectTimeoutMs: number;
}

export function clientConfig(settings: ConnectionSettings, onSocket?: (socket: Socket) => void) {
  return {
    connectionString: settings.connectionString,
    application_name: settings.applicationName,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    keepAlive: true,
    types,
    ...(onSocket === undefined
      ? {}
      : {
          stream: () => {
            const socket = new Socket();
            onSocket(socket);
            return socket;
          },
        }),
  } satisfies pg.ClientConfig;
}

// Connection failures, a server shutting down or starting up, and contention: all pass with time.
const transientSqlStates = new Set([
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
  "40001", // serialization_failure
  "40P01", // deadlock_detected
  "55P03", // lock_not_available
]);
const transientErrnos = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ENOENT",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);
const transientMessages =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|Connection ended/i;

/** Whether an error from pg is the connection or the server going away (or contention), not a bug or a refusal. */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (transientSqlStates.has(code) || code.startsWith("08") || transientErrnos.has(code)) return true;
  }
  if (transientMessages.test(error.message)) return true;
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined && cause !== error && isTransient(cause);
}

/**
 * Turns a lost connection or a server restart into the retryable `busy`, and leaves every other
 * error as it is. `unsure` says a commit was in flight, so the change may or may not have happened.
 */
export function translatePostgresError(error: unknown, unsure = false): unknown {
  if (error instanceof BoardError || !isTransient(error)) return error;
  const what = (error as Error).message;
  const advice = unsure
    ? "the change may or may not have been made; read the board before repeating it"
    : "retry";
  return new BoardError(
    "busy",
    `the board's PostgreSQL server is unreachable or restarting (${what}); ${advice}`,
    { cause: error, unsure },
  );
}
