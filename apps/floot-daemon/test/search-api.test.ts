import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionSearchHit } from "@bridgeworks/protocol";
import { silentLogger } from "@bridgeworks/runtime";
import { openJournal } from "@bridgeworks/turn-journal";
import { afterEach, describe, expect, test } from "vitest";
import { type RunningDaemon, startDaemon } from "../src/daemon/daemon.js";

/** The parts of the answers these tests read. */
interface Answer {
  id?: string;
  title?: string;
  sessions: { id: string }[];
  hits: SessionSearchHit[];
  nextCursor?: string;
  error: { code: string; message: string; field?: string };
}

/** What a test started, ended after it, the last started first. */
const endings: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const end of endings.splice(0).reverse()) await end();
});

/**
 * A daemon on a journal already holding session `searched` (one completed turn "tune the kernel
 * scheduler", whose answers mention "latency" 30 times) and session `quiet`.
 */
async function start() {
  const root = mkdtempSync(join(tmpdir(), "floot-search-api-"));
  endings.push(() => rmSync(root, { recursive: true, force: true }));
  const stateDir = join(root, "state");
  mkdirSync(stateDir, { recursive: true });
  const journal = openJournal({ path: join(stateDir, "journal.sqlite") });
  journal.sessions.createSession({ id: "searched", backend: "claude" });
  journal.sessions.createSession({ id: "quiet", backend: "codex" });
  const turn = journal.turns.submitTurn("searched", { prompt: "tune the kernel scheduler" });
  journal.turns.transition(turn.id, { phase: "spawning" });
  journal.turns.transition(turn.id, { phase: "running", process: { pid: 999_999, startTime: "1" } });
  journal.events.appendEvents(
    turn.id,
    Array.from({ length: 30 }, (_, i) => ({ type: "assistant.text" as const, text: `latency note ${i}` })),
  );
  journal.turns.transition(turn.id, { phase: "completed" });
  journal.maintenance.close();
  const daemon: RunningDaemon = await startDaemon({
    stateDir,
    env: { FLOOT_RUNTIME_DIR: join(root, "run"), PATH: process.env.PATH },
    logger: silentLogger,
  });
  endings.push(() => daemon.stop());
  const { token } = JSON.parse(readFileSync(join(stateDir, "daemon.json"), "utf8")) as { token: string };
  const base = `http://127.0.0.1:${daemon.port}`;
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined && { "content-type": "application/json" }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Answer };
  };
}

describe("POST /v1/sessions/{id}/rename", () => {
  test("renames: the session, its list row and a search show the new title", async () => {
    const call = await start();
    const renamed = await call("POST", "/v1/sessions/quiet/rename", { title: "  Release notes  " });
    expect(renamed).toMatchObject({ status: 200, body: { id: "quiet", title: "Release notes" } });
    expect((await call("GET", "/v1/sessions/quiet")).body.title).toBe("Release notes");
    const list = await call("GET", "/v1/sessions?q=release");
    expect(list.body.sessions.map((s) => s.id)).toEqual(["quiet"]);
    const hits = await call("GET", "/v1/search?q=release");
    expect(hits.body).toEqual({
      hits: [
        {
          sessionId: "quiet",
          title: "Release notes",
          source: "title",
          snippet: [{ text: "Release", match: true }, { text: " notes" }],
        },
      ],
    });
  });

  test("a bad title is a 400 naming the field and the problem; an unknown session a 404", async () => {
    const call = await start();
    expect(await call("POST", "/v1/sessions/quiet/rename", { title: "a\u001b[31mred" })).toEqual({
      status: 400,
      body: {
        error: {
          code: "invalid_body",
          message: "title: title must not contain control characters (U+001B at character 2)",
          field: "title",
        },
      },
    });
    const long = await call("POST", "/v1/sessions/quiet/rename", { title: "x".repeat(201) });
    expect(long.body.error).toMatchObject({ code: "invalid_body", field: "title" });
    expect(long.body.error.message).toBe("title: title must be at most 200 characters");
    const missing = await call("POST", "/v1/sessions/quiet/rename", {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.field).toBe("title");
    const extra = await call("POST", "/v1/sessions/quiet/rename", { title: "ok", colour: "red" });
    expect(extra.status).toBe(400);
    const unknown = await call("POST", "/v1/sessions/nope/rename", { title: "ok" });
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: "session_not_found" } } });
    expect((await call("GET", "/v1/sessions/quiet")).body.title).toBeUndefined();
  });
});

describe("GET /v1/search", () => {
  test("finds a prompt and events with their session, paged by nextCursor", async () => {
    const call = await start();
    const prompt = await call("GET", "/v1/search?q=scheduler");
    expect(prompt.status).toBe(200);
    expect(prompt.body.hits.map((hit) => hit.source).sort()).toEqual(["prompt", "title"]);
    const seen: number[] = [];
    let cursor = "";
    for (let page = 0; page < 5; page += 1) {
      const { status, body } = await call(
        "GET",
        `/v1/search?q=latency&limit=12${cursor && `&cursor=${cursor}`}`,
      );
      expect(status).toBe(200);
      seen.push(...body.hits.map((hit) => hit.eventIndex!));
      expect(body.hits.every((hit) => hit.sessionId === "searched")).toBe(true);
      if (body.nextCursor === undefined) break;
      cursor = encodeURIComponent(body.nextCursor);
    }
    expect(seen).toHaveLength(30);
    expect(new Set(seen).size).toBe(30);
  });

  test("a query FTS5 cannot read is a 400 naming why, never a 500; so are no query and a bad limit or cursor", async () => {
    const call = await start();
    const syntax = await call("GET", `/v1/search?q=${encodeURIComponent('"kernel')}`);
    expect(syntax.status).toBe(400);
    expect(syntax.body.error.code).toBe("invalid_search_query");
    expect(syntax.body.error.message).toMatch(/^query: unterminated string \(FTS5 query syntax: /);
    const near = await call("GET", `/v1/search?q=${encodeURIComponent("kernel AND")}`);
    expect(near).toMatchObject({ status: 400, body: { error: { code: "invalid_search_query" } } });
    expect(near.body.error.message).toContain('fts5: syntax error near ""');
    expect(await call("GET", "/v1/search?q=%20")).toEqual({
      status: 400,
      body: { error: { code: "bad_request", message: "q: the search query must not be empty", field: "q" } },
    });
    expect((await call("GET", "/v1/search?q=a&limit=51")).body.error).toEqual({
      code: "bad_request",
      message: "limit: must be an integer from 1 to 50",
      field: "limit",
    });
    expect((await call("GET", "/v1/search?q=a&cursor=zz")).body.error).toMatchObject({
      code: "invalid_input",
      message: "cursor: not a cursor of a search page; pass a page's nextCursor",
    });
  });
});
