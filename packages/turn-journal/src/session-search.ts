import type { SessionSearchHit, SessionSearchQuery, SnippetPart } from "@bridgeworks/protocol";
import type { Database, Statement } from "better-sqlite3";
import { JournalError } from "./errors.js";

export const defaultSearchPageSize = 20;
/**
 * How many matches, newest first, a search ranks: a word in every event of a million must not cost a
 * million rankings. A match older than the newest this many is not found; a narrower query finds it.
 */
export const searchRankWindow = 1000;

interface WindowRow {
  rowid: number;
  session_id: string;
  turn_id: string | null;
  event_idx: number | null;
  score: number;
}

const openMark = "\u0001";
const closeMark = "\u0002";

/**
 * Full-text search over the `search_text` FTS5 index (migration 10): the newest `searchRankWindow`
 * matches ranked by bm25, paged by offset under the newest row the first page saw, so later pages rank
 * the same rows whatever is written meanwhile. Each hit of a page gets its snippet.
 */
export class SessionSearch {
  readonly #window: Statement<[string, number, number], WindowRow>;
  readonly #snippet: Statement<[string, number], { snippet: string }>;
  readonly #title: Statement<[string], { title: string | null }>;

  // A rowid is bound CAST to an integer: FTS5 drops its `rowid =` filter for a REAL, which a JS number binds as.
  constructor(db: Database) {
    this.#window = db.prepare(
      `SELECT rowid, session_id, turn_id, event_idx, bm25(search_text) AS score FROM search_text
       WHERE search_text MATCH ? AND rowid <= CAST(? AS INTEGER) ORDER BY rowid DESC LIMIT ?`,
    );
    this.#snippet = db.prepare(
      `SELECT snippet(search_text, 0, '${openMark}', '${closeMark}', '…', 24) AS snippet FROM search_text
       WHERE search_text MATCH ? AND rowid = CAST(? AS INTEGER)`,
    );
    this.#title = db.prepare("SELECT title FROM sessions WHERE id = ?");
  }

  search(query: SessionSearchQuery): { hits: SessionSearchHit[]; nextCursor?: string } {
    const limit = query.limit ?? defaultSearchPageSize;
    const { below, offset } =
      query.cursor === undefined ? { below: Number.MAX_SAFE_INTEGER, offset: 0 } : decodeCursor(query.cursor);
    const window = this.#read(query.query, below);
    window.sort((a, b) => a.score - b.score || b.rowid - a.rowid);
    const page = window.slice(offset, offset + limit);
    const hits = page.map((row) => this.#hit(query.query, row));
    const newest = window.reduce((max, row) => Math.max(max, row.rowid), 0);
    const next = offset + limit;
    return { hits, ...(next < window.length && { nextCursor: encodeCursor(newest, next) }) };
  }

  #read(query: string, below: number): WindowRow[] {
    try {
      return this.#window.all(query, below, searchRankWindow);
    } catch (error) {
      if (error instanceof Error && (error as { code?: string }).code === "SQLITE_ERROR") {
        throw new JournalError(
          "invalid_search_query",
          `query: ${error.message} (FTS5 query syntax: words, "a phrase", prefix*, AND, OR, NOT, NEAR(a b); put a word with punctuation in double quotes, as "foo-bar")`,
        );
      }
      throw error;
    }
  }

  #hit(query: string, row: WindowRow): SessionSearchHit {
    const title = this.#title.get(row.session_id)?.title ?? undefined;
    const snippet = this.#snippet.get(query, row.rowid)?.snippet ?? "";
    const source = row.turn_id === null ? "title" : row.event_idx === null ? "prompt" : "event";
    return {
      sessionId: row.session_id,
      ...(title !== undefined && { title }),
      source,
      ...(row.turn_id !== null && { turnId: row.turn_id }),
      ...(row.event_idx !== null && { eventIndex: row.event_idx }),
      snippet: snippetParts(snippet),
    };
  }
}

/** FTS5's snippet with its marks, as parts: the marked ones are what the query matched. */
export function snippetParts(snippet: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  for (const piece of snippet.split(openMark)) {
    const close = piece.indexOf(closeMark);
    if (close === -1) {
      if (piece !== "") parts.push({ text: piece });
      continue;
    }
    parts.push({ text: piece.slice(0, close), match: true });
    const rest = piece.slice(close + 1);
    if (rest !== "") parts.push({ text: rest });
  }
  return parts;
}

function encodeCursor(below: number, offset: number): string {
  return Buffer.from(JSON.stringify([below, offset])).toString("base64url");
}

function decodeCursor(cursor: string): { below: number; offset: number } {
  try {
    const [below, offset] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (Number.isSafeInteger(below) && Number.isSafeInteger(offset) && (offset as number) >= 0)
      return { below: below as number, offset: offset as number };
  } catch {
    // Reported below.
  }
  throw new JournalError("invalid_input", "cursor: not a cursor of a search page; pass a page's nextCursor");
}
