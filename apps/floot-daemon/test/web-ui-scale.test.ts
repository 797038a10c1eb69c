import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { FlootOverview } from "@bridgeworks/protocol";
import { openJournal } from "@bridgeworks/turn-journal";
import Database from "better-sqlite3";
import type { Page } from "playwright-core";
import { expect, test } from "vitest";
import { journalFileName } from "../src/state-dir.js";
import { browserTestScope, openBrowser, screenshot, signInPage } from "./browser.js";
import { FlootWorld } from "./daemon-harness.js";

// The sessions page at scale: a journal of 10,000 sessions, Debian's Chromium against the built daemon.
// The page must load, search and filter through pages of the overview (never all of it) and take new
// sessions from the change stream, not from polling.

const sessionCount = 10_000;
const stoppedIds = ["stopped-a", "stopped-b", "stopped-c"];

const scope = browserTestScope();

/** 10,000 sessions a second apart (s-00000 oldest), three of them stopped, in one transaction. */
function seed(stateDir: string): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const path = join(stateDir, journalFileName);
  openJournal({ path }).maintenance.close();
  const db = new Database(path);
  try {
    const insert = db.prepare(
      "INSERT INTO sessions (id, backend, created_at, stopped_at, title) VALUES (?, 'claude', ?, ?, ?)",
    );
    const start = Date.now() - sessionCount * 1000;
    db.transaction(() => {
      for (let i = 0; i < sessionCount; i += 1) {
        const id = i < 3 ? stoppedIds[i]! : `s-${String(i).padStart(5, "0")}`;
        const at = start + i * 1000;
        insert.run(id, at, stoppedIds.includes(id) ? at : null, `Refactor module ${i}`);
      }
    }).immediate();
  } finally {
    db.close();
  }
}

interface OverviewRequest {
  url: URL;
  sessions: number;
  bytes: number;
}

function watchOverviews(page: Page): OverviewRequest[] {
  const seen: OverviewRequest[] = [];
  page.on("response", async (response) => {
    const url = new URL(response.url());
    if (url.pathname !== "/v1/overview" && url.pathname !== "/v1/sessions") return;
    const body = await response.body();
    const parsed = JSON.parse(body.toString("utf8")) as FlootOverview;
    seen.push({ url, sessions: parsed.sessions.length, bytes: body.length });
  });
  return seen;
}

const shownIds = (page: Page) =>
  page.locator(".session-row").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-session-id")));

test("10,000 sessions: the page loads, searches and filters by pages, and new sessions are pushed", async () => {
  const world = await FlootWorld.create("claude", { steps: [] });
  scope.world = world;
  seed(world.stateDir);
  await world.startDaemon();
  scope.browser = await openBrowser();
  const { page } = scope.browser;
  const overviews = watchOverviews(page);
  const changeStreams: string[] = [];
  page.on("request", (request) => {
    if (new URL(request.url()).pathname === "/v1/changes") changeStreams.push(request.url());
  });
  await signInPage(page, world);
  await page.locator(".session-row").nth(49).waitFor();

  // Newest first, one page of 50.
  const first = await shownIds(page);
  expect(first).toHaveLength(50);
  expect(first[0]).toBe("s-09999");
  expect(first[49]).toBe("s-09950");
  await page.locator("#load-more").click();
  await page.locator(".session-row").nth(99).waitFor();
  expect((await shownIds(page))[99]).toBe("s-09900");

  // Filter by status: the daemon filters, the page shows just those.
  await page.locator("#session-status").selectOption("stopped");
  await expect
    .poll(() => shownIds(page), { timeout: 30_000 })
    .toEqual(["stopped-c", "stopped-b", "stopped-a"]);
  await page.locator("#session-status").selectOption("");

  // Search by title, then by id prefix.
  await page.locator("#session-search").fill("module 4242");
  await expect.poll(() => shownIds(page), { timeout: 30_000 }).toEqual(["s-04242"]);
  await page.locator("#session-search").fill("s-0123");
  await expect
    .poll(() => shownIds(page), { timeout: 30_000 })
    .toEqual([
      "s-01239",
      "s-01238",
      "s-01237",
      "s-01236",
      "s-01235",
      "s-01234",
      "s-01233",
      "s-01232",
      "s-01231",
      "s-01230",
    ]);
  await page.locator("#session-search").fill("");
  await page.locator(".session-row").nth(49).waitFor();
  await screenshot(page, "sessions-10k");

  // A session created elsewhere appears on top, pushed: no overview is read for it.
  const before = overviews.length;
  const created = await world.createSession();
  await page.locator(`.session-row[data-session-id="${created.id}"]`).waitFor({ timeout: 30_000 });
  expect((await shownIds(page))[0]).toBe(created.id);
  expect(overviews.length).toBe(before);

  // Every list read was one bounded page: never the whole overview.
  expect(overviews.length).toBeGreaterThan(0);
  for (const read of overviews) {
    expect(read.url.pathname).toBe("/v1/overview");
    expect(read.url.searchParams.get("limit")).toBe("50");
    expect(read.sessions).toBeLessThanOrEqual(50);
    expect(read.bytes).toBeLessThan(200_000);
  }
  expect(changeStreams.length).toBeGreaterThanOrEqual(1);
}, 300_000);
