import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { SessionSearchHit } from "@bridgeworks/protocol";
import Database from "better-sqlite3";
import { describe, expect, test } from "vitest";
import { JournalError } from "../src/errors.js";
import type { TurnJournal } from "../src/journal.js";
import type { EventTransform } from "../src/options.js";
import { searchRankWindow } from "../src/session-search.js";
import { createTestJournal, oldJournal, runningTurn } from "./helpers.js";

const words = (hit: SessionSearchHit) => hit.snippet.map((part) => part.text).join("");
const matched = (hit: SessionSearchHit) => hit.snippet.filter((part) => part.match).map((part) => part.text);

function refusal(work: () => unknown): JournalError {
  try {
    work();
  } catch (error) {
    if (error instanceof JournalError) return error;
    throw error;
  }
  throw new Error("expected a JournalError");
}

/** A running turn of a new session, with `prompt`. */
function turnWith(journal: TurnJournal, prompt: string) {
  const session = journal.sessions.createSession({ backend: "claude" });
  const turn = journal.turns.submitTurn(session.id, { prompt });
  journal.turns.transition(turn.id, { phase: "spawning" });
  journal.turns.transition(turn.id, { phase: "running", process: { pid: 4242, startTime: "1" } });
  return { session, turn };
}

describe("full-text search over titles, prompts and events", () => {
  test("finds a prompt, an answer, a tool's input and output and an error, each with its session and a marked snippet", () => {
    const { journal } = createTestJournal();
    const { session, turn } = turnWith(journal, "migrate the billing tables");
    journal.events.appendEvents(turn.id, [
      { type: "assistant.delta", text: "the invoices " },
      { type: "assistant.text", text: "The invoices table needs a new index." },
      { type: "tool.started", toolId: "t1", name: "Bash", input: { command: "psql -c 'vacuum invoices'" } },
      { type: "tool.completed", toolId: "t1", output: "VACUUM done for invoices", isError: false },
      { type: "error", message: "rate limited while reading invoices" },
      { type: "usage", input: 10, output: 5 },
    ]);
    journal.events.flush();

    const billing = journal.sessions.searchSessions({ query: "billing" }).hits;
    expect(billing).toHaveLength(2); // the prompt, and the title the first prompt gave the session
    expect(billing.map((hit) => hit.source).sort()).toEqual(["prompt", "title"]);
    expect(
      billing.every((hit) => hit.sessionId === session.id && hit.title === "migrate the billing tables"),
    );
    expect(matched(billing[0]!)).toEqual(["billing"]);

    const invoices = journal.sessions.searchSessions({ query: "invoices" }).hits;
    // One each: the delta's text comes again in assistant.text and is not indexed twice.
    const indexed = journal.events
      .readEvents(turn.id)
      .filter(({ event }) =>
        ["assistant.text", "tool.started", "tool.completed", "error"].includes(event.type),
      )
      .map(({ index }) => index);
    expect(indexed).toHaveLength(4);
    expect(invoices.map((hit) => hit.eventIndex).sort()).toEqual(indexed);
    expect(invoices.every((hit) => hit.source === "event" && hit.turnId === turn.id)).toBe(true);
    const tool = invoices.find((hit) => hit.eventIndex === indexed[1])!;
    expect(words(tool)).toBe("Bash psql -c 'vacuum invoices'");
    expect(matched(tool)).toEqual(["invoices"]);
  });

  test("ranks a closer match first: the session named for the word before a long answer that mentions it once", () => {
    const { journal } = createTestJournal();
    const { turn } = turnWith(journal, "look around");
    journal.events.appendEvents(turn.id, [
      {
        type: "assistant.text",
        text: `Here is a long survey of the repository ${"and its many modules ".repeat(30)}touching the scheduler once.`,
      },
    ]);
    journal.events.flush();
    const named = turnWith(journal, "something else").session;
    journal.sessions.renameSession(named.id, "scheduler scheduler rewrite");
    const hits = journal.sessions.searchSessions({ query: "scheduler" }).hits;
    expect(hits.map((hit) => [hit.source, hit.sessionId])).toEqual([
      ["title", named.id],
      ["event", turn.sessionId],
    ]);
  });

  test("pages: every hit once across pages, no gap; the pages stay as the first one saw them when more is written", () => {
    const { journal } = createTestJournal();
    const { turn } = turnWith(journal, "start");
    journal.events.appendEvents(
      turn.id,
      Array.from({ length: 25 }, (_, i) => ({ type: "assistant.text" as const, text: `needle number ${i}` })),
    );
    journal.events.flush();
    const first = journal.sessions.searchSessions({ query: "needle", limit: 10 });
    expect(first.hits).toHaveLength(10);
    journal.events.appendEvents(turn.id, [{ type: "assistant.text", text: "needle written later" }]);
    journal.events.flush();
    const second = journal.sessions.searchSessions({ query: "needle", limit: 10, cursor: first.nextCursor! });
    const third = journal.sessions.searchSessions({ query: "needle", limit: 10, cursor: second.nextCursor! });
    expect(third.nextCursor).toBeUndefined();
    const seen = [...first.hits, ...second.hits, ...third.hits].map((hit) => hit.eventIndex);
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
    expect(seen).not.toContain(29); // the later one (index 4 + 25): not in the pages the first one began
    expect(journal.sessions.searchSessions({ query: "needle", limit: 50 }).hits).toHaveLength(26);
  });

  test("ranks at most the newest searchRankWindow matches", () => {
    const { journal } = createTestJournal();
    const { turn } = turnWith(journal, "start");
    const count = searchRankWindow + 5;
    journal.events.appendEvents(
      turn.id,
      Array.from({ length: count }, (_, i) => ({ type: "reasoning" as const, text: `common ${i}` })),
    );
    journal.events.flush();
    let cursor: string | undefined;
    let total = 0;
    do {
      const page = journal.sessions.searchSessions({ query: "common", limit: 50, ...(cursor && { cursor }) });
      total += page.hits.length;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(total).toBe(searchRankWindow);
  });

  test("a query FTS5 cannot read, an empty one, a bad limit or cursor is refused naming what is wrong", () => {
    const { journal } = createTestJournal();
    const search = (query: Parameters<typeof journal.sessions.searchSessions>[0]) =>
      refusal(() => journal.sessions.searchSessions(query));
    const unterminated = search({ query: '"unterminated' });
    expect(unterminated.code).toBe("invalid_search_query");
    expect(unterminated.message).toMatch(/^query: unterminated string \(FTS5 query syntax/);
    expect(search({ query: "NEAR(" }).message).toMatch(/^query: fts5: syntax error near/);
    expect(search({ query: "foo-bar" }).message).toContain("put a word with punctuation in double quotes");
    expect(search({ query: "  " })).toMatchObject({
      code: "invalid_input",
      message: "search.query: query must not be empty",
    });
    expect(search({ query: "a", limit: 51 })).toMatchObject({ code: "invalid_input" });
    expect(search({ query: "a", limit: 51 }).message).toMatch(/^search\.limit: /);
    expect(search({ query: "a", cursor: "nope" })).toMatchObject({
      code: "invalid_input",
      message: "cursor: not a cursor of a search page; pass a page's nextCursor",
    });
    expect(journal.sessions.searchSessions({ query: '"foo-bar"' }).hits).toEqual([]);
  });
});

describe("the index holds text only as the journal keeps it: masked", () => {
  const hide = (value: unknown): unknown =>
    typeof value === "string"
      ? value.replaceAll("hunter2", "[hidden]")
      : Array.isArray(value)
        ? value.map(hide)
        : value !== null && typeof value === "object"
          ? Object.fromEntries(
              Object.entries(value).map(([key, each]) => [
                key,
                ["type", "toolId", "name"].includes(key) ? each : hide(each),
              ]),
            )
          : value;
  const hiding: EventTransform = { event: (event) => hide(event) as typeof event };

  test("a masked secret in an answer, a tool's input and output, an error and a failed turn is never indexed", () => {
    const { journal, path } = createTestJournal({ transform: hiding });
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [
      { type: "assistant.text", text: "the password is hunter2" },
      { type: "tool.started", toolId: "t1", name: "Bash", input: { command: "login --password hunter2" } },
      { type: "tool.completed", toolId: "t1", output: { stdout: "hunter2 accepted" }, isError: false },
      { type: "warning", message: "saw hunter2 in the output" },
    ]);
    journal.turns.transition(turn.id, { phase: "failed", error: { code: "x", message: "hunter2 leaked" } });
    journal.events.flush();

    expect(journal.sessions.searchSessions({ query: "hunter2" }).hits).toEqual([]);
    expect(journal.sessions.searchSessions({ query: "hidden" }).hits.length).toBeGreaterThanOrEqual(4);
    const db = new Database(path, { readonly: true });
    try {
      db.exec("CREATE VIRTUAL TABLE temp.search_words USING fts5vocab(main, search_text, row)");
      const terms = db.prepare("SELECT term FROM temp.search_words").pluck().all() as string[];
      expect(terms).toContain("hidden");
      expect(terms).toContain("password");
      expect(terms).not.toContain("hunter2");
      const stored = db.prepare("SELECT text FROM search_text").pluck().all().join("\n");
      expect(stored).toContain("[hidden]");
      expect(stored).not.toContain("hunter2");
    } finally {
      db.close();
    }
    const files = readdirSync(dirname(path)).map((name) =>
      readFileSync(join(dirname(path), name)).toString("latin1"),
    );
    expect(files.join("\n")).not.toContain("hunter2");
  });
});

describe("renaming a session", () => {
  test("the title is checked: empty, too long, a control character or an unknown session is refused, naming why", () => {
    const { journal } = createTestJournal();
    const session = journal.sessions.createSession({ backend: "codex" });
    const rename = (title: unknown, id = session.id) =>
      refusal(() => journal.sessions.renameSession(id, title as string));
    expect(rename("   ")).toMatchObject({ code: "invalid_input", message: "title: title must not be empty" });
    expect(rename("x".repeat(201)).message).toBe("title: title must be at most 200 characters");
    expect(rename("two\nlines").message).toBe(
      "title: title must not contain control characters (U+000A at character 4)",
    );
    expect(rename("bell\u0007").message).toContain("U+0007 at character 5");
    expect(rename(42).message).toBe("title: title must be a string");
    expect(rename("fine", "missing")).toMatchObject({ code: "session_not_found" });
    expect(journal.sessions.getSession(session.id)?.title).toBeUndefined();
  });

  test("a new title is shown, kept over the first prompt, found by search, and the old one is no longer found", () => {
    const { journal, reopen } = createTestJournal();
    const { session, turn } = turnWith(journal, "first prompt about widgets");
    const changed: string[] = [];
    journal.sessions.subscribeSessionChanges((id) => changed.push(id));
    expect(journal.sessions.renameSession(session.id, "  Gadget cleanup  ").title).toBe("Gadget cleanup");
    expect(changed).toEqual([session.id]);
    journal.turns.transition(turn.id, { phase: "completed" });
    journal.turns.submitTurn(session.id, { prompt: "second prompt" });
    journal.sessions.renameSession(session.id, "Sprocket cleanup");
    const again = reopen();
    expect(again.sessions.getSession(session.id)?.title).toBe("Sprocket cleanup");
    expect(again.sessions.listSessionPage({ search: "sprocket" }).sessions.map((s) => s.id)).toEqual([
      session.id,
    ]);
    expect(again.sessions.searchSessions({ query: "sprocket" }).hits).toMatchObject([
      { sessionId: session.id, source: "title", title: "Sprocket cleanup" },
    ]);
    expect(again.sessions.searchSessions({ query: "gadget" }).hits).toEqual([]);
    // The first prompt is still found as a prompt; the title it gave is gone with the rename.
    expect(again.sessions.searchSessions({ query: "widgets" }).hits.map((hit) => hit.source)).toEqual([
      "prompt",
    ]);
  });
});

describe("migration 10 indexes what a journal held before", () => {
  test("a version 9 journal's prompts, titles and events are found once it is opened", () => {
    const path = oldJournal(9);
    const db = new Database(path);
    db.exec(`
      UPDATE sessions SET title = 'hi there';
      INSERT INTO turn_events (turn_id, idx, at, type, payload) VALUES
        ('t1', 3, 3, 'assistant.text', '{"type":"assistant.text","text":"an old answer about kernels"}'),
        ('t1', 4, 3, 'assistant.delta', '{"type":"assistant.delta","text":"kernels"}');
    `);
    db.close();
    const { journal } = createTestJournal({ path });
    expect(journal.sessions.searchSessions({ query: "kernels" }).hits).toMatchObject([
      { sessionId: "s1", turnId: "t1", eventIndex: 3, source: "event", title: "hi there" },
    ]);
    expect(
      journal.sessions
        .searchSessions({ query: "hi" })
        .hits.map((hit) => hit.source)
        .sort(),
    ).toEqual(["prompt", "title"]);
  });
});
