import type { WaitingSessionPageQuery } from "@bridgeworks/protocol";
import type { Database, Statement } from "better-sqlite3";
import { JournalError } from "./errors.js";
import { defaultSessionPageLimit } from "./session-pages.js";

/** A session waiting on a person, and since when: its oldest open request or decision. */
export interface WaitingSessionRow {
  session_id: string;
  /** The oldest open request's `created_at`, or the undecided turn's `ended_at` (ms). */
  since: number;
  /** That request's id, or that turn's: the keyset's tie-break. */
  request_id: string;
}

export interface WaitingSessionRowPage {
  rows: WaitingSessionRow[];
  nextCursor?: string;
}

const open = "status IN ('pending', 'orphaned')";

/**
 * A turn interrupted with a call that may have run, undecided, and still its session's latest turn (a
 * turn sent after it, or a retry of it, is the person moving on): it waits on a decision.
 */
const awaitingDecision = (t: string) => `
  ${t}.phase = 'interrupted' AND ${t}.error_code = 'may_have_run' AND ${t}.cli_lost_decision IS NULL
  AND NOT EXISTS (SELECT 1 FROM turns later WHERE later.session_id = ${t}.session_id AND later.seq > ${t}.seq)`;

/** No open request or decision of the same session was asked before `r`'s (asked at `since`). */
const oldestOfSession = (r: string, since: string) => `
  NOT EXISTS (SELECT 1 FROM permission_requests o WHERE o.session_id = ${r}.session_id AND o.${open}
    AND (o.created_at, o.id) < (${since}, ${r}.id))
  AND NOT EXISTS (SELECT 1 FROM secret_requests o WHERE o.session_id = ${r}.session_id AND o.${open}
    AND (o.created_at, o.id) < (${since}, ${r}.id))
  AND NOT EXISTS (SELECT 1 FROM turns o WHERE o.session_id = ${r}.session_id AND ${awaitingDecision("o")}
    AND (o.ended_at, o.id) < (${since}, ${r}.id))`;

/**
 * Each waiting session once, at its oldest open request or decision, in the order they were asked.
 * Each side walks its table's partial index of what is open (not every row) from the cursor on, checks
 * on the per-session indexes that nothing older of its session is open, and the three are merged in
 * order until the page is full.
 */
const pageSql = `
  SELECT p.session_id, p.created_at AS since, p.id AS request_id FROM permission_requests p
    INDEXED BY permission_requests_open_since
    WHERE p.${open} AND (p.created_at, p.id) > (?, ?) AND ${oldestOfSession("p", "p.created_at")}
  UNION ALL
  SELECT s.session_id, s.created_at AS since, s.id AS request_id FROM secret_requests s
    INDEXED BY secret_requests_open_since
    WHERE s.${open} AND (s.created_at, s.id) > (?, ?) AND ${oldestOfSession("s", "s.created_at")}
  UNION ALL
  SELECT t.session_id, t.ended_at AS since, t.id AS request_id FROM turns t
    INDEXED BY turns_awaiting_decision
    WHERE ${awaitingDecision("t")} AND (t.ended_at, t.id) > (?, ?) AND ${oldestOfSession("t", "t.ended_at")}
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
    const rows = this.#page.all(...after, ...after, ...after, limit + 1);
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
