import type { WaitingSessionPageQuery } from "@bridgeworks/protocol";
import type { Database, Statement } from "better-sqlite3";
import { JournalError } from "./errors.js";
import { defaultSessionPageLimit } from "./session-pages.js";

/** A session waiting on a person, and since when: its oldest open request (either kind). */
export interface WaitingSessionRow {
  session_id: string;
  /** The oldest open request's `created_at` (ms). */
  since: number;
  /** That request's id: the keyset's tie-break. */
  request_id: string;
}

export interface WaitingSessionRowPage {
  rows: WaitingSessionRow[];
  nextCursor?: string;
}

const open = "status IN ('pending', 'orphaned')";

/** No open request of either kind of the same session was asked before `r`'s. */
const oldestOfSession = (r: string) => `
  NOT EXISTS (SELECT 1 FROM permission_requests o WHERE o.session_id = ${r}.session_id AND o.${open}
    AND (o.created_at, o.id) < (${r}.created_at, ${r}.id))
  AND NOT EXISTS (SELECT 1 FROM secret_requests o WHERE o.session_id = ${r}.session_id AND o.${open}
    AND (o.created_at, o.id) < (${r}.created_at, ${r}.id))`;

/**
 * Each waiting session once, at its oldest open request, in the order the requests were asked. Each
 * side walks its table's partial index of open requests from the cursor on (what is open, not every
 * request), checks on the per-session indexes that no older open request of its session exists, and the
 * two are merged in order until the page is full.
 */
const pageSql = `
  SELECT p.session_id, p.created_at AS since, p.id AS request_id FROM permission_requests p
    INDEXED BY permission_requests_open_since
    WHERE p.${open} AND (p.created_at, p.id) > (?, ?) AND ${oldestOfSession("p")}
  UNION ALL
  SELECT s.session_id, s.created_at AS since, s.id AS request_id FROM secret_requests s
    INDEXED BY secret_requests_open_since
    WHERE s.${open} AND (s.created_at, s.id) > (?, ?) AND ${oldestOfSession("s")}
  ORDER BY since, request_id LIMIT ?`;

/** Keyset pages of the sessions waiting on a person, the longest waiting first. */
export class WaitingSessions {
  readonly #page: Statement<unknown[], WaitingSessionRow>;

  constructor(db: Database) {
    this.#page = db.prepare<unknown[], WaitingSessionRow>(pageSql);
  }

  /** The SQL a page runs (its query plan is checked by the tests). */
  static readonly sql = pageSql;

  page(query: WaitingSessionPageQuery): WaitingSessionRowPage {
    const limit = query.limit ?? defaultSessionPageLimit;
    const after = query.cursor === undefined ? [-1, ""] : decodeWaitingCursor(query.cursor);
    const rows = this.#page.all(...after, ...after, limit + 1);
    if (rows.length <= limit) return { rows };
    const page = rows.slice(0, limit);
    const last = page.at(-1)!;
    return {
      rows: page,
      nextCursor: Buffer.from(JSON.stringify([last.since, last.request_id])).toString("base64url"),
    };
  }
}

function decodeWaitingCursor(cursor: string): [number, string] {
  try {
    const [since, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (Number.isSafeInteger(since) && typeof id === "string") return [since as number, id];
  } catch {
    // Reported below.
  }
  throw new JournalError(
    "invalid_input",
    "cursor: not a cursor of a page of waiting sessions; pass that page's nextCursor",
  );
}
