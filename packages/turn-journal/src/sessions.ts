import {
  JournalId,
  SessionDraft,
  SessionPageQuery,
  type SessionRecord,
  type SessionSearchPage,
  SessionSearchQuery,
  SessionTitle,
  WaitingSessionPageQuery,
} from "@bridgeworks/protocol";
import { isoTime } from "./clock.js";
import { JournalError, parseInput } from "./errors.js";
import { JournalArea, type JournalCore } from "./journal-area.js";
import { findSession, requireSession } from "./records.js";
import { type SessionRow, toSessionRecord } from "./rows.js";
import { defaultSearchWindow, defaultSessionPageLimit, pageOf, SessionPages } from "./session-pages.js";
import { SessionSearch } from "./session-search.js";
import { WaitingSessions } from "./waiting-sessions.js";

export type SessionPage = { sessions: SessionRecord[]; nextCursor?: string };

/** A session waiting on a person, and since when (its oldest open request, ISO). */
export type WaitingSessionPage = {
  sessions: { session: SessionRecord; since: string }[];
  nextCursor?: string;
};

/** Sessions: created, stopped, found by id, listed in keyset pages and searched, and heard of when they change. */
export class JournalSessions extends JournalArea {
  readonly #pages: SessionPages;
  readonly #waiting: WaitingSessions;
  readonly #search: SessionSearch;

  constructor(core: JournalCore) {
    super(core);
    this.#pages = new SessionPages(core.connection.db);
    this.#waiting = new WaitingSessions(core.connection.db);
    this.#search = new SessionSearch(core.connection.db);
  }

  createSession(draft: SessionDraft): SessionRecord {
    const { sql, clock, feed, newId } = this.connection;
    const { id = JournalId.parse(newId()), backend } = parseInput(SessionDraft, draft, "session");
    this.connection.transaction(() => {
      if (sql.session.get(id)) throw new JournalError("session_exists", `session ${id} already exists`);
      sql.insertSession.run(id, backend, clock.now());
      feed.sessionChanged(id);
    });
    return requireSession(this.connection, id);
  }

  /** Gives the session the title a person chose; the lists show it, and search finds it, from this commit on. */
  renameSession(sessionId: string, title: string): SessionRecord {
    const valid = parseInput(SessionTitle, title, "title");
    const { sql, feed } = this.connection;
    this.connection.transaction(() => {
      requireSession(this.connection, sessionId);
      sql.renameSession.run(valid, sessionId);
      feed.sessionChanged(sessionId);
    });
    return requireSession(this.connection, sessionId);
  }

  /**
   * One page of full-text hits in the sessions' titles, prompts and events' text (masked as journaled),
   * best first among the newest `searchRankWindow` matches. A query FTS5 cannot read is an
   * `invalid_search_query` naming why.
   */
  searchSessions(query: SessionSearchQuery): SessionSearchPage {
    return this.#search.search(parseInput(SessionSearchQuery, query, "search"));
  }

  getSession(sessionId: string): SessionRecord | undefined {
    return findSession(this.connection, sessionId);
  }

  listSessions(): SessionRecord[] {
    return this.connection.sql.sessions.all().map(toSessionRecord);
  }

  /** One keyset page of sessions, newest first, optionally of one status or matching a search. */
  listSessionPage(query: SessionPageQuery = {}): SessionPage {
    const valid = parseInput(SessionPageQuery, query, "query");
    const { rows, nextCursor } = this.#pages.page(valid);
    return { sessions: rows.map(toSessionRecord), ...(nextCursor !== undefined && { nextCursor }) };
  }

  /**
   * One keyset page of the sessions waiting on a person (an open permission or secret request, pending
   * or orphaned, or a latest turn interrupted with `may_have_run` and undecided), the longest waiting
   * first: each once, at its oldest. Read through partial indexes of what is open, whatever the number
   * of sessions.
   */
  listWaitingSessionPage(query: WaitingSessionPageQuery = {}): WaitingSessionPage {
    const valid = parseInput(WaitingSessionPageQuery, query, "query");
    const { rows, nextCursor } = this.#waiting.page(valid);
    const sessions = rows.map((row) => ({
      session: requireSession(this.connection, row.session_id),
      since: isoTime(row.since),
    }));
    return { sessions, ...(nextCursor !== undefined && { nextCursor }) };
  }

  /**
   * The page `listSessionPage` returns, for a server's event loop: a search (the one filter that scans)
   * reads at most `window` sessions at a time and awaits `pause()` between, so a rare term that must
   * read thousands of sessions to fill a page never holds the loop for long. Sessions created meanwhile
   * are newer than the page and left to the next read, as between pages.
   */
  async listSessionPageInSteps(
    query: SessionPageQuery,
    { pause, window = defaultSearchWindow }: { pause: () => Promise<void>; window?: number },
  ): Promise<SessionPage> {
    const valid = parseInput(SessionPageQuery, query, "query");
    if (valid.search === undefined) return this.listSessionPage(valid);
    const limit = valid.limit ?? defaultSessionPageLimit;
    const found: SessionRow[] = [];
    let cursor = valid.cursor;
    for (;;) {
      const step = this.#pages.searchStep(
        { ...valid, limit: limit - found.length, ...(cursor !== undefined && { cursor }) },
        window,
      );
      found.push(...step.rows);
      if (found.length > limit || step.resumeCursor === undefined) break;
      cursor = step.resumeCursor;
      await pause();
    }
    const { rows, nextCursor } = pageOf(found, limit);
    return { sessions: rows.map(toSessionRecord), ...(nextCursor !== undefined && { nextCursor }) };
  }

  /**
   * Wakes `listener` with a session's id after each commit that changed what a session list shows of
   * it: created, stopped, a turn submitted, a turn's phase, a secret request of it resolved, a
   * permission request of it asked, decided or expired.
   */
  subscribeSessionChanges(listener: (sessionId: string) => void): () => void {
    return this.connection.feed.subscribeSessions(listener);
  }

  /** Refuses new turns from now on; queued turns are cancelled. The active turn must have ended. */
  stopSession(sessionId: string): SessionRecord {
    const { sql, clock, feed } = this.connection;
    const touched = this.connection.transaction(() => {
      const session = requireSession(this.connection, sessionId);
      if (session.status === "stopped") return [];
      if (session.activeTurnId !== undefined) {
        throw new JournalError(
          "session_busy",
          `session ${sessionId} has active turn ${session.activeTurnId}; end it before stopping the session`,
        );
      }
      const queued = sql.queuedTurns.all(sessionId);
      for (const turn of queued) {
        this.writes.changeTurn(turn, {
          phase: "cancelled",
          error: { code: "session_stopped", message: `session ${sessionId} was stopped` },
        });
      }
      sql.stopSession.run(clock.now(), sessionId);
      feed.sessionChanged(sessionId);
      return queued.map((turn) => turn.id);
    });
    feed.notify(touched);
    return requireSession(this.connection, sessionId);
  }
}
