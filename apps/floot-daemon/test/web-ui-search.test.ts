import type { Page } from "playwright-core";
import { expect, test } from "vitest";
import { browserTestScope, openBrowser, pageOrigin, saveScreenshot, signInPage, tooWide } from "./browser.js";
import { FlootWorld } from "./daemon-harness.js";

// Issue 32's rename and search: Debian's Chromium against the built daemon, real `claude` on the model
// double. A session is renamed in place on its page (a bad title refused with the daemon's reason) and
// keeps its name after a reload, in the page's title and in the list; the search box finds what the
// agent said and the new title, marks the matched words, opens the session; desktop and 390x844.

const scope = browserTestScope();

const hitIds = (page: Page) =>
  page
    .locator("#search-hits .search-hit")
    .evaluateAll((hits) => hits.map((hit) => hit.getAttribute("data-session-id")));

async function search(page: Page, query: string): Promise<void> {
  await page.locator("#turn-search").fill(query);
  await page.locator("#search-submit").click();
}

test("a session renamed on its page keeps the name after a reload; search finds its turn's text and its title and opens it", async () => {
  const w = await FlootWorld.create("claude", {
    steps: [
      {
        match: { lastUserTextIncludes: "[harbour]" },
        response: {
          events: [{ type: "text", text: "The lighthouse keeper logs every ship at the harbour." }],
        },
      },
    ],
  });
  scope.world = w;
  await w.startDaemon();
  const session = await w.createSession();
  const other = await w.createSession();
  const turn = await w.send(session.id, "[harbour] tell me about the port");
  expect((await w.waitForEnd(turn.id)).phase).toBe("completed");

  scope.browser = await openBrowser();
  const { page } = scope.browser;
  await signInPage(page, w);

  // What the agent said is found, with its session, the word marked; the hit opens the session.
  await search(page, "lighthouse");
  await page.locator("#search-hits .search-hit").first().waitFor({ timeout: 30_000 });
  await expect(hitIds(page)).resolves.toEqual([session.id]);
  await expect(page.locator("#search-hits .search-hit mark").allTextContents()).resolves.toEqual([
    "lighthouse",
  ]);
  await expect(page.locator("#search-hits .hit-snippet").textContent()).resolves.toBe(
    "The lighthouse keeper logs every ship at the harbour.",
  );
  await saveScreenshot(page.locator(".search-panel"), "search");
  // A query the daemon cannot read shows why, and no hit.
  await search(page, "harbour AND");
  await expect
    .poll(() => page.locator("#search-note").textContent(), { timeout: 30_000 })
    .toMatch(/^query: fts5: syntax error near "" \(FTS5 query syntax/);
  await expect(page.locator("#search-hits .search-hit").count()).resolves.toBe(0);
  await search(page, "lighthouse");
  await page.locator("#search-hits .search-hit a").first().click();
  await page.waitForURL(`${pageOrigin(w)}/#/s/${session.id}`);

  // Renamed in place: a blank title is refused with the daemon's reason, then a good one is saved.
  const heading = page.locator(".session-head h1");
  await expect(page.locator("#session-title").textContent({ timeout: 30_000 })).resolves.toBe(
    "[harbour] tell me about the port",
  );
  await page.locator("#rename-session").click();
  await page.locator("#title-input").fill("   ");
  await page.locator("#title-input").press("Enter");
  await expect
    .poll(() => page.locator("#rename-note").textContent(), { timeout: 30_000 })
    .toBe("title: title must not be empty");
  await page.locator("#title-input").fill("Harbour survey");
  await page.locator("#title-input").press("Enter");
  await page.locator("#session-title").filter({ hasText: "Harbour survey" }).waitFor({ timeout: 30_000 });
  await expect(page.title()).resolves.toBe("Floot · Harbour survey");
  // Esc leaves an edit without renaming.
  await page.locator("#rename-session").click();
  await page.locator("#title-input").fill("Not this");
  await page.locator("#title-input").press("Escape");
  await expect(page.locator("#session-title").textContent()).resolves.toBe("Harbour survey");

  await page.reload();
  await page.locator("#session-title").filter({ hasText: "Harbour survey" }).waitFor({ timeout: 30_000 });
  await expect(heading.locator("code").getAttribute("title")).resolves.toBe(session.id);
  await expect(page.title()).resolves.toBe("Floot · Harbour survey");
  expect((await w.client.request<{ title?: string }>("GET", `/v1/sessions/${session.id}`)).title).toBe(
    "Harbour survey",
  );

  // The list shows the name; the search finds it as the session's title, not its old first-prompt title.
  await page.goto(`${pageOrigin(w)}/#/`);
  const row = page.locator(`#all-sessions [data-session-id="${session.id}"]`);
  await expect(row.locator(".session-title").textContent({ timeout: 30_000 })).resolves.toBe(
    "Harbour survey",
  );
  await expect(
    page.locator(`#all-sessions [data-session-id="${other.id}"] .session-title`).count(),
  ).resolves.toBe(0);
  await search(page, "survey");
  await page.locator("#search-hits .search-hit").first().waitFor({ timeout: 30_000 });
  await expect(hitIds(page)).resolves.toEqual([session.id]);
  await expect(page.locator("#search-hits .search-hit .chip").textContent()).resolves.toBe("title");

  // On a phone: the hits and the rename form stay inside the screen.
  await scope.browser.close();
  scope.browser = await openBrowser({ width: 390, height: 844, mobile: true });
  const phone = scope.browser.page;
  await signInPage(phone, w);
  await search(phone, "lighthouse OR survey");
  await phone.locator("#search-hits .search-hit").nth(1).waitFor({ timeout: 30_000 });
  await expect(tooWide(phone)).resolves.toEqual([]);
  await saveScreenshot(phone.locator(".search-panel"), "search-phone");
  await phone.locator("#search-hits .search-hit a").first().click();
  await phone.locator("#rename-session").click();
  await phone.locator("#title-input").waitFor();
  await expect(tooWide(phone)).resolves.toEqual([]);
});
