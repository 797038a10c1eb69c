import Database from "better-sqlite3";
import { describe, expect, test } from "vitest";
import { JournalError } from "../src/errors.js";
import { openJournal } from "../src/journal.js";
import { unfinishedTurnsSql } from "../src/statements.js";
import { createTestJournal, oldJournal } from "./helpers.js";

/** Sessions s-00..s-(n-1), one second apart, each with one turn titled by its number. */
function manySessions(count: number) {
  const test = createTestJournal();
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const id = `s-${String(i).padStart(2, "0")}`;
    test.journal.sessions.createSession({ id, backend: i % 2 === 0 ? "claude" : "codex" });
    test.journal.turns.submitTurn(id, { prompt: `Fix bug number ${i}` });
    test.journal.turns.transition(test.journal.turns.getCurrentTurn(id)!.id, { phase: "cancelled" });
    ids.push(id);
    test.clock.skip(1000);
  }
  return { ...test, ids };
}

describe("session pages", () => {
  test("keyset pages, newest first, cover every session once", () => {
    const { journal, ids } = manySessions(23);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = journal.sessions.listSessionPage({ limit: 5, ...(cursor && { cursor }) });
      seen.push(...page.sessions.map((session) => session.id));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined);
    expect(seen).toEqual([...ids].reverse());
    expect(pages).toBe(5);
    // A session created after the first page was read does not shift later pages.
    const first = journal.sessions.listSessionPage({ limit: 5 });
    journal.sessions.createSession({ id: "s-new", backend: "claude" });
    const second = journal.sessions.listSessionPage({ limit: 5, cursor: first.nextCursor! });
    expect(second.sessions.map((session) => session.id)).toEqual(["s-17", "s-16", "s-15", "s-14", "s-13"]);
  });

  test("filters by status and searches id prefixes and titles", () => {
    const { journal } = manySessions(12);
    journal.sessions.createSession({ id: "live", backend: "claude" });
    const turn = journal.turns.submitTurn("live", { prompt: "Deploy the Thing" });
    expect(journal.sessions.listSessionPage({ status: "provisioning" }).sessions.map((s) => s.id)).toEqual([
      "live",
    ]);
    journal.turns.transition(turn.id, { phase: "spawning" });
    journal.turns.transition(turn.id, { phase: "running", process: { pid: 1, startTime: "1" } });
    expect(journal.sessions.listSessionPage({ status: "running" }).sessions.map((s) => s.id)).toEqual([
      "live",
    ]);
    expect(journal.sessions.listSessionPage({ status: "idle" }).sessions).toHaveLength(12);
    journal.sessions.stopSession("s-03");
    expect(journal.sessions.listSessionPage({ status: "stopped" }).sessions.map((s) => s.id)).toEqual([
      "s-03",
    ]);
    expect(journal.sessions.listSessionPage({ search: "s-1" }).sessions.map((s) => s.id)).toEqual([
      "s-11",
      "s-10",
    ]);
    expect(journal.sessions.listSessionPage({ search: "thing" }).sessions.map((s) => s.title)).toEqual([
      "Deploy the Thing",
    ]);
    expect(journal.sessions.listSessionPage({ search: "number 7" }).sessions.map((s) => s.id)).toEqual([
      "s-07",
    ]);
    // LIKE wildcards in a search are literal.
    expect(journal.sessions.listSessionPage({ search: "s_" }).sessions).toEqual([]);
    expect(journal.sessions.listSessionPage({ search: "%" }).sessions).toEqual([]);
  });

  test("a cursor that is not one is refused, naming it", () => {
    const { journal } = manySessions(1);
    expect(() => journal.sessions.listSessionPage({ cursor: "nope" })).toThrow(JournalError);
    expect(() => journal.sessions.listSessionPage({ cursor: "nope" })).toThrow(/cursor/);
    expect(() => journal.sessions.listSessionPage({ limit: 0 })).toThrow(/limit/);
  });

  test("a page uses the indexes: no scan of sessions or turns", () => {
    const { journal, path } = manySessions(3);
    journal.maintenance.close();
    const db = new Database(path, { readonly: true });
    try {
      const plan = (sql: string) =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((row) => row.detail);
      const newest = plan(
        "SELECT id FROM sessions s WHERE (s.created_at, s.id) < (1, 'x') ORDER BY s.created_at DESC, s.id DESC LIMIT 5",
      );
      expect(newest.join("\n")).toContain("sessions_newest");
      expect(newest.join("\n")).not.toContain("TEMP B-TREE");
    } finally {
      db.close();
    }
  });

  test("listeners hear a session's changes after commit, never a rolled-back one", () => {
    const { journal } = createTestJournal();
    const heard: string[] = [];
    const stop = journal.sessions.subscribeSessionChanges((id) => heard.push(id));
    journal.sessions.createSession({ id: "a", backend: "claude" });
    const turn = journal.turns.submitTurn("a", { prompt: "x" });
    journal.turns.transition(turn.id, { phase: "spawning" });
    journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "quiet" }]);
    journal.events.flush();
    expect(heard).toEqual(["a", "a", "a"]);
    expect(() => journal.sessions.createSession({ id: "a", backend: "claude" })).toThrow();
    expect(heard).toHaveLength(3);
    stop();
    journal.turns.transition(turn.id, { phase: "cancelled" });
    expect(heard).toHaveLength(3);
  });

  test("migration 5 titles existing sessions from their first prompt", () => {
    const path = oldJournal(3);
    const journal = openJournal({ path });
    try {
      expect(journal.sessions.getSession("s1")?.title).toBeDefined();
    } finally {
      journal.maintenance.close();
    }
  });
});

describe("restart", () => {
  test("recovery's query reads the unfinished turns' index, not every turn", () => {
    const { journal, path } = manySessions(3);
    journal.maintenance.close();
    const db = new Database(path, { readonly: true });
    try {
      db.exec("ANALYZE");
    } catch {
      // Read-only: plan without statistics, as a fresh journal has none.
    }
    try {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${unfinishedTurnsSql}`).all() as { detail: string }[])
        .map((row) => row.detail)
        .join("\n");
      expect(plan).toContain("turns_unfinished");
      expect(plan).not.toMatch(/SCAN t(?! USING INDEX turns_unfinished)/);
    } finally {
      db.close();
    }
  });
});

describe("session pages in steps", () => {
  /** Every page of `query`, following nextCursor, as ids. */
  async function allPages(
    read: (cursor: string | undefined) => Promise<{ sessions: { id: string }[]; nextCursor?: string }>,
  ): Promise<string[][]> {
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await read(cursor);
      pages.push(page.sessions.map((session) => session.id));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return pages;
  }

  test("a search read in steps of any window gives exactly the pages of listSessionPage", async () => {
    const { journal } = manySessions(37);
    journal.turns.submitTurn("s-11", { prompt: "more" });
    const queries = [
      { limit: 3, search: "number 1" },
      { limit: 5, search: "NUMBER 2" },
      { limit: 2, search: "s-3" },
      { limit: 4, search: "no such title" },
      { limit: 1, search: "bug", status: "idle" as const },
      { limit: 50, search: "number" },
    ];
    for (const query of queries) {
      const expected = await allPages(async (cursor) =>
        journal.sessions.listSessionPage({ ...query, ...(cursor && { cursor }) }),
      );
      if (query.search !== "no such title") expect(expected.flat().length).toBeGreaterThan(0);
      for (const window of [1, 2, 3, 7, 1000]) {
        const pauses = { count: 0 };
        const stepped = await allPages((cursor) =>
          journal.sessions.listSessionPageInSteps(
            { ...query, ...(cursor && { cursor }) },
            {
              window,
              pause: async () => {
                pauses.count += 1;
              },
            },
          ),
        );
        expect(stepped, `${JSON.stringify(query)} in windows of ${window}`).toEqual(expected);
        if (window === 1) expect(pauses.count).toBeGreaterThan(30);
        if (window === 1000) expect(pauses.count).toBe(0);
      }
    }
  });

  test("each step reads at most its window, pausing between steps; a page without a search never pauses", async () => {
    const { journal } = manySessions(30);
    const log: string[] = [];
    const page = await journal.sessions.listSessionPageInSteps(
      { limit: 2, search: "number 1" },
      { window: 4, pause: async () => void log.push("pause") },
    );
    // Newest first: 29..26 (no match), 25..22, 21..18 (19, 18 match) then 17..14 (17: one more, a next page).
    expect(page.sessions.map((session) => session.id)).toEqual(["s-19", "s-18"]);
    expect(page.nextCursor).toBeDefined();
    expect(log).toEqual(["pause", "pause", "pause"]);
    const plain = await journal.sessions.listSessionPageInSteps(
      { limit: 2 },
      { window: 1, pause: async () => void log.push("plain pause") },
    );
    expect(plain.sessions.map((session) => session.id)).toEqual(["s-29", "s-28"]);
    expect(log).toHaveLength(3);
  });

  test("a bad query is refused as listSessionPage refuses it", async () => {
    const { journal } = manySessions(2);
    await expect(
      journal.sessions.listSessionPageInSteps({ search: "x", cursor: "nope" }, { pause: async () => {} }),
    ).rejects.toThrow(/cursor: not a cursor of a session page/);
    await expect(
      journal.sessions.listSessionPageInSteps({ limit: 0, search: "x" }, { pause: async () => {} }),
    ).rejects.toBeInstanceOf(JournalError);
  });
});
