import type { SessionPageQuery, SessionStatus } from "@bridgeworks/protocol";
import type { Database, Statement } from "better-sqlite3";
import { JournalError } from "./errors.js";
import type { SessionRow } from "./rows.js";
import { sessionColumns } from "./statements.js";

export const defaultSessionPageLimit = 50;
/** Sessions a search step reads: about a millisecond of SQLite here. */
export const defaultSearchWindow = 500;

export interface SessionRowPage {
  rows: SessionRow[];
  /** Where the next page starts; absent on the last page. */
  nextCursor?: string;
}

/** What one step of a search found, and where the next step starts (absent: no session is left). */
export interface SearchStep {
  rows: SessionRow[];
  resumeCursor?: string;
}

// Written exactly as in the `turns_unfinished` index, so that SQLite may scan that (small) index.
const unfinished = "a.phase NOT IN ('completed', 'failed', 'cancelled', 'interrupted')";

const statusConditions: Readonly<Record<SessionStatus, string>> = {
  stopped: "s.stopped_at IS NOT NULL",
  provisioning: `s.stopped_at IS NULL AND ${unfinished} AND a.phase IN ('accepted', 'spawning')`,
  running: `s.stopped_at IS NULL AND ${unfinished} AND a.phase IN ('running', 'awaiting_secret')`,
  idle: "s.stopped_at IS NULL AND a.id IS NULL",
};

/**
 * Keyset pages of sessions, newest first (`created_at`, then id, both descending, on the
 * `sessions_newest` index). A page reads `limit` + 1 rows, whatever the number of sessions; a status
 * of a live turn is found from the unfinished turns, not by probing every session. Only `search` may
 * scan: by id prefix, or the title's substring, until the page is full.
 */
export class SessionPages {
  readonly #db: Database;
  readonly #statements = new Map<string, Statement<unknown[], SessionRow>>();

  constructor(db: Database) {
    this.#db = db;
  }

  page(query: SessionPageQuery): SessionRowPage {
    const limit = query.limit ?? defaultSessionPageLimit;
    const { conditions, parameters } = filters(query);
    const where = conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "";
    const sql = `SELECT ${sessionColumns} ${where} ORDER BY s.created_at DESC, s.id DESC LIMIT ?`;
    return pageOf(this.#statement(sql).all(...parameters, limit + 1), limit);
  }

  /**
   * One step of a search: the matches among the next `window` sessions after `query.cursor` (newest
   * first), at most `limit` + 1 of them, and where the next step starts. Steps joined until a page is
   * full are the page `page` returns; each reads a bounded number of sessions.
   */
  searchStep(query: SessionPageQuery, window: number): SearchStep {
    const limit = query.limit ?? defaultSessionPageLimit;
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const bound = after === undefined ? "" : "WHERE (created_at, id) < (?, ?)";
    // The window's last session, found on the index alone; the search then reads down to it.
    const last = this.#statement(
      `SELECT created_at, id FROM sessions ${bound} ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?`,
    ).get(...(after === undefined ? [] : [after.createdAt, after.id]), window - 1) as
      | Pick<SessionRow, "created_at" | "id">
      | undefined;
    const { conditions, parameters } = filters(query);
    if (last !== undefined) {
      conditions.push("(s.created_at, s.id) >= (?, ?)");
      parameters.push(last.created_at, last.id);
    }
    const sql = `SELECT ${sessionColumns} WHERE ${conditions.join(" AND ")} ORDER BY s.created_at DESC, s.id DESC LIMIT ?`;
    const rows = this.#statement(sql).all(...parameters, limit + 1);
    return { rows, ...(last !== undefined && { resumeCursor: encodeCursor(last.created_at, last.id) }) };
  }

  #statement(sql: string): Statement<unknown[], SessionRow> {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare<unknown[], SessionRow>(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

/** `limit` + 1 rows read: the page, and the next page's cursor if there is one more. */
export function pageOf(rows: SessionRow[], limit: number): SessionRowPage {
  if (rows.length <= limit) return { rows };
  const page = rows.slice(0, limit);
  const last = page.at(-1)!;
  return { rows: page, nextCursor: encodeCursor(last.created_at, last.id) };
}

function filters(query: SessionPageQuery): { conditions: string[]; parameters: unknown[] } {
  const conditions: string[] = [];
  const parameters: unknown[] = [];
  if (query.cursor !== undefined) {
    const { createdAt, id } = decodeCursor(query.cursor);
    conditions.push("(s.created_at, s.id) < (?, ?)");
    parameters.push(createdAt, id);
  }
  if (query.status !== undefined) conditions.push(statusConditions[query.status]);
  if (query.search !== undefined) {
    conditions.push("(s.id LIKE ? ESCAPE '\\' OR instr(lower(coalesce(s.title, '')), ?) > 0)");
    parameters.push(`${query.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`, query.search.toLowerCase());
  }
  return { conditions, parameters };
}

function encodeCursor(createdAt: number, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString("base64url");
}

function decodeCursor(cursor: string): { createdAt: number; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (Number.isSafeInteger(createdAt) && typeof id === "string")
      return { createdAt: createdAt as number, id };
  } catch {
    // Reported below.
  }
  throw new JournalError("invalid_input", "cursor: not a cursor of a session page; pass a page's nextCursor");
}
