import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PermissionRequest, SecretRequest } from "@bridgeworks/protocol";
import { openJournal } from "@bridgeworks/turn-journal";
import Database from "better-sqlite3";
import type { Page } from "playwright-core";
import { expect, test } from "vitest";
import { journalFileName } from "../src/state-dir.js";
import { bashCallsScript } from "./bash-calls-script.js";
import { browserTestScope, openBrowser, saveScreenshot, signInPage } from "./browser.js";
import { FlootWorld, providedSecret, requestSecretStep } from "./daemon-harness.js";

// Issue 32's inbox: Debian's Chromium against the built daemon, real `claude` on the model double. Two
// sessions wait on a person (an approval, a secret) behind sixty newer ones, off the list's first page:
// the sessions page puts them first, says what each waits for and since when, filters to them, and
// counts them in the title and on the tab's icon; desktop and a 390x844 phone.

const scope = browserTestScope();

const seededCount = 60;

/** Sixty idle sessions created after `after` (ms), a millisecond apart, written beside the daemon. */
function seedNewer(stateDir: string, after: number): void {
  const db = new Database(join(stateDir, journalFileName));
  try {
    db.pragma("busy_timeout = 10000");
    const insert = db.prepare(
      "INSERT INTO sessions (id, backend, created_at, title) VALUES (?, 'claude', ?, ?)",
    );
    db.transaction(() => {
      for (let i = 0; i < seededCount; i += 1) {
        insert.run(`s-${String(i).padStart(3, "0")}`, after + 1 + i, `Refactor module ${i}`);
      }
    }).immediate();
  } finally {
    db.close();
  }
}

const rowIds = (page: Page, selector: string) =>
  page.locator(selector).evaluateAll((rows) => rows.map((row) => row.getAttribute("data-session-id")));

/** The ids of the session rows a person sees, top to bottom. */
const visibleIds = (page: Page) => rowIds(page, ".session-row:visible");

const iconWaiting = (page: Page) =>
  page.locator('link[rel="icon"]').evaluate((link: HTMLLinkElement) => ({
    waiting: link.dataset.waiting,
    png: link.href.startsWith("data:image/png;base64,"),
  }));

const noWiderThanViewport = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

test("the sessions waiting on a person come first, say for what and since when, filter, and count in the title and icon", async () => {
  const w = await FlootWorld.create("claude", {
    steps: [
      {
        match: providedSecret(),
        repeat: true,
        response: { events: [{ type: "text", text: "SECRET DONE" }] },
      },
      ...bashCallsScript([["[approve]", "toolu_approve", "touch approved.txt", "APPROVED DONE"]]).steps,
      requestSecretStep("[secret]"),
    ],
  });
  scope.world = w;
  await w.startDaemon();
  const approving = await w.createSession({ allowedTools: [], permissionMode: "default" });
  const asking = await w.createSession();
  // Sixty sessions newer than both: the list's first page (50) holds neither.
  seedNewer(w.stateDir, Date.parse(asking.createdAt));

  scope.browser = await openBrowser();
  const { page } = scope.browser;
  await signInPage(page, w);
  await page.locator("#all-sessions .session-row").nth(49).waitFor();
  await expect(page.title()).resolves.toBe("Floot · sessions");
  await expect(page.locator(".inbox-section").isHidden()).resolves.toBe(true);
  expect((await visibleIds(page))[0]).toBe(`s-${String(seededCount - 1).padStart(3, "0")}`);
  await expect(iconWaiting(page)).resolves.toEqual({ waiting: "0", png: false });

  // Both start waiting, the approval first; the page hears it on the change stream.
  const first = await w.send(approving.id, "[approve] touch a file");
  await page.locator(`#inbox [data-session-id="${approving.id}"]`).waitFor({ timeout: 90_000 });
  await expect.poll(() => page.title(), { timeout: 10_000 }).toBe("(1) Floot · sessions");
  const second = await w.send(asking.id, "[secret] deploy it");
  await page.locator(`#inbox [data-session-id="${asking.id}"]`).waitFor({ timeout: 90_000 });
  await expect.poll(() => page.title(), { timeout: 10_000 }).toBe("(2) Floot · sessions");
  const [permission] = (
    await w.client.request<{ requests: PermissionRequest[] }>("GET", "/v1/permission-requests")
  ).requests;
  const [secret] = (await w.client.request<{ requests: SecretRequest[] }>("GET", "/v1/secret-requests"))
    .requests;

  /** The inbox as the page reads it from the daemon (a reload), checked at the viewport it is at. */
  const checkInbox = async () => {
    await page.reload();
    await page.locator("#inbox .session-row").nth(1).waitFor({ timeout: 30_000 });
    await page.locator("#all-sessions .session-row").nth(49).waitFor({ timeout: 30_000 });
    // First, the longest waiting first; the others follow, without them.
    const ids = await visibleIds(page);
    expect(ids.slice(0, 2)).toEqual([approving.id, asking.id]);
    expect(ids.filter((id) => id === approving.id || id === asking.id)).toHaveLength(2);
    expect(ids).toHaveLength(52);
    const row = (id: string) => page.locator(`#inbox [data-session-id="${id}"]`);
    await expect(row(approving.id).locator(".waiting-for").textContent()).resolves.toBe(
      "Waiting for your approval of Bash",
    );
    await expect(row(asking.id).locator(".waiting-for").textContent()).resolves.toBe(
      "Waiting for a secret (API_TOKEN)",
    );
    await expect(row(approving.id).locator(".waiting-since").getAttribute("datetime")).resolves.toBe(
      permission!.createdAt,
    );
    await expect(row(asking.id).locator(".waiting-since").getAttribute("datetime")).resolves.toBe(
      secret!.createdAt,
    );
    await expect(row(asking.id).locator(".waiting-since").textContent()).resolves.toMatch(
      /^since \d\d:\d\d:\d\d( [AP]M)? \((just now|\d+ min ago)\)$/,
    );
    await expect(page.title()).resolves.toBe("(2) Floot · sessions");
    await expect(iconWaiting(page)).resolves.toEqual({ waiting: "2", png: true });
    await expect(page.locator("#only-waiting").textContent()).resolves.toBe("Needs you (2)");
    // What it waits for and its badge are whole on the screen, inside the row.
    for (const id of [approving.id, asking.id]) {
      const rowBox = (await row(id).boundingBox())!;
      for (const part of [".waiting-for", ".waiting-badge"]) {
        await expect(row(id).locator(part).isVisible()).resolves.toBe(true);
        const box = (await row(id).locator(part).boundingBox())!;
        expect(box.x).toBeGreaterThanOrEqual(rowBox.x);
        expect(box.x + box.width).toBeLessThanOrEqual(
          Math.min(rowBox.x + rowBox.width, page.viewportSize()!.width),
        );
      }
    }
    await expect(noWiderThanViewport(page)).resolves.toBe(true);

    // The filter: only the two, then everything again.
    await page.locator("#only-waiting").click();
    await expect(page.locator("#only-waiting").getAttribute("aria-pressed")).resolves.toBe("true");
    expect(await visibleIds(page)).toEqual([approving.id, asking.id]);
    await expect(page.locator("#load-more").isVisible()).resolves.toBe(false);
    await expect(noWiderThanViewport(page)).resolves.toBe(true);
    await page.locator("#only-waiting").click();
    expect(await visibleIds(page)).toHaveLength(52);
  };

  await checkInbox();
  await page.setViewportSize({ width: 390, height: 844 });
  await checkInbox();
  await page.setViewportSize({ width: 1100, height: 820 });

  // Answered, each leaves the inbox; the count follows.
  expect((await w.floot("approval", "allow", permission!.id)).code).toBe(0);
  await page
    .locator(`#inbox [data-session-id="${approving.id}"]`)
    .waitFor({ state: "detached", timeout: 60_000 });
  await expect.poll(() => page.title(), { timeout: 10_000 }).toBe("(1) Floot · sessions");
  await w.client.request("POST", `/v1/secret-requests/${secret!.id}/submit`, {
    value: "a-long-enough-token",
  });
  await page
    .locator(`#inbox [data-session-id="${asking.id}"]`)
    .waitFor({ state: "detached", timeout: 60_000 });
  await expect.poll(() => page.title(), { timeout: 10_000 }).toBe("Floot · sessions");
  await expect(page.locator(".inbox-section").isHidden()).resolves.toBe(true);
  await expect(iconWaiting(page)).resolves.toEqual({ waiting: "0", png: false });
  expect((await w.waitForEnd(first.id, 90_000)).phase).toBe("completed");
  expect((await w.waitForEnd(second.id, 90_000)).phase).toBe("completed");
}, 300_000);

/** 09:30 UTC on a fixed day: every time the screenshots show is from here, so a rerun writes the same bytes. */
const screenshotDay = Date.UTC(2026, 5, 15, 9, 30, 0);

/**
 * Sessions with fixed ids, prompts, workspaces and times, written beside the running daemon through the
 * journal's own API with a clock of the test's: three done, two waiting on a person (a Bash call to
 * approve, a secret), as a real day leaves them. Their turns' processes are made up (no CLI runs).
 */
function seedScreenshotDay(stateDir: string): void {
  let now = screenshotDay;
  const clock = { now: () => now, setTimeout: () => 0, clearTimeout: () => {} };
  const journal = openJournal({ path: join(stateDir, journalFileName), clock });
  const session = (id: string, workspace: string, prompt: string) => {
    mkdirSync(join(stateDir, "sessions", id), { recursive: true, mode: 0o700 });
    writeFileSync(join(stateDir, "sessions", id, "session.json"), `${JSON.stringify({ workspace })}\n`, {
      mode: 0o600,
    });
    journal.sessions.createSession({ id, backend: "claude" });
    const turn = journal.turns.submitTurn(id, { prompt });
    journal.turns.transition(turn.id, { phase: "spawning" });
    return journal.turns.transition(turn.id, {
      phase: "running",
      process: { pid: 4_194_301, startTime: "1" },
    });
  };
  try {
    const migration = session("migrations", "/home/you/src/billing", "Make the failing migration test pass");
    now += 4 * 60_000;
    const token = session("api-token", "/home/you/src/api", "Rotate the staging API token and redeploy");
    for (const [id, workspace, prompt] of [
      ["node-22", "/home/you/src/web", "Upgrade the web app to Node 22"],
      ["flaky-login", "/home/you/src/web", "Find why the login test is flaky"],
      ["docs-typos", "/home/you/src/docs", "Fix the typos in the install guide"],
    ] as const) {
      now += 5 * 60_000;
      journal.turns.transition(session(id, workspace, prompt).id, { phase: "completed" });
    }
    now += 60_000;
    journal.permissions.requestPermission(migration.id, {
      toolCallKey: "toolu_migrate",
      toolName: "Bash",
      inputSummary: "npm run migrate -- --env=test",
      inputDigest: "a".repeat(64),
      unmatchedRules: [],
    });
    now += 3 * 60_000;
    journal.secrets.requestSecret(token.id, {
      toolCallKey: "toolu_token",
      name: "STAGING_API_TOKEN",
      prompt: "The new staging token",
    });
  } finally {
    journal.maintenance.close();
  }
}

test("the inbox's screenshots, desktop and phone, from a day of fixed times", async () => {
  const w = await FlootWorld.create("claude", { steps: [] });
  scope.world = w;
  await w.startDaemon();
  seedScreenshotDay(w.stateDir);
  scope.browser = await openBrowser({ timezoneId: "UTC", locale: "en-GB" });
  const { page } = scope.browser;
  // The page's clock: 09:56, a few minutes after the last request (timers run as usual).
  await page.clock.setFixedTime(screenshotDay + 26 * 60_000);
  await signInPage(page, w);
  await page.locator("#inbox .session-row").nth(1).waitFor();
  await page.locator("#all-sessions .session-row").nth(2).waitFor();
  expect(await visibleIds(page)).toEqual(["migrations", "api-token", "docs-typos", "flaky-login", "node-22"]);
  await expect(page.locator("#inbox .waiting-since").allTextContents()).resolves.toEqual([
    "since 09:50:00 (6 min ago)",
    "since 09:53:00 (3 min ago)",
  ]);
  await expect(page.title()).resolves.toBe("(2) Floot · sessions");
  await saveScreenshot(page, "inbox");
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(noWiderThanViewport(page)).resolves.toBe(true);
  await saveScreenshot(page, "inbox-phone");
}, 120_000);
