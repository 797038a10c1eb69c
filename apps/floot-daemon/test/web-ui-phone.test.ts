import type { FlootSession, TurnRecord } from "@bridgeworks/protocol";
import type { Locator } from "playwright-core";
import { expect, test } from "vitest";
import { bashCallsScript } from "./bash-calls-script.js";
import {
  browserTestScope,
  openBrowser,
  openSessionPage,
  pageOrigin,
  saveScreenshot,
  screenshot,
  signInLink,
  tooWide,
} from "./browser.js";
import { FlootWorld } from "./daemon-harness.js";
import { startDaemonWithoutCodex } from "./ui-long-path.js";

// Issue 32, the phone: Debian's Chromium at 390x844, the built daemon, real `claude` on the model double
// and a Codex turn that failed `cli_not_found` with a 150-character PATH that has nowhere to break. On
// every page no element is wider than the screen, the sessions list is readable, and the composer, Send
// and Cancel are where a tap lands.

const scope = browserTestScope();
const phone = { width: 390, height: 844 };

/** The button is on screen and a tap at its centre lands on it, not on what is around or over it. */
async function expectTappable(button: Locator): Promise<void> {
  await button.scrollIntoViewIfNeeded();
  const box = (await button.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(phone.width);
  expect(box.y + box.height).toBeLessThanOrEqual(phone.height);
  const hit = await button.evaluate((element) => {
    const box = element.getBoundingClientRect();
    const there = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    return there !== null && element.contains(there);
  });
  expect(hit).toBe(true);
}

test("at 390x844 nothing widens any page, the long-PATH error included; the list is readable; Send and Cancel take a tap", async () => {
  const w = await FlootWorld.create(
    "claude",
    bashCallsScript([["[ask]", "toolu_phone", "touch phone.txt", "PHONE DONE"]]),
  );
  scope.world = w;
  const path = await startDaemonWithoutCodex(w);
  const codex = await w.client.request<FlootSession>("POST", "/v1/sessions", { backend: "codex" });
  const failed = await w.waitForEnd((await w.send(codex.id, "[fail] refactor the parser")).id);
  expect(failed.error?.code).toBe("cli_not_found");
  expect(failed.error?.message).toContain(path);
  const claude = await w.createSession({ allowedTools: [], permissionMode: "default" });
  const asking = await w.send(
    claude.id,
    "[ask] touch a file in the workspace, so that we see how a long first prompt reads in the list on a phone",
  );

  scope.browser = await openBrowser({ ...phone, mobile: true });
  const { page } = scope.browser;
  // Signed out: what to do, on one screen.
  await page.goto(`${pageOrigin(w)}/`);
  await page.getByRole("heading", { name: "Signed out" }).waitFor();
  expect(await tooWide(page)).toEqual([]);
  await page.goto(await signInLink(w));
  await page.getByRole("heading", { name: "Sessions" }).waitFor();

  // The list: the waiting session's badge whole and on screen, its title on at most two lines as wide
  // as the row, its workspace shown.
  const row = page.locator(`[data-session-id="${claude.id}"]`);
  const badge = row.locator(".waiting-badge");
  await badge.waitFor({ timeout: 90_000 });
  await page.locator(`[data-session-id="${codex.id}"]`).waitFor();
  expect(await tooWide(page)).toEqual([]);
  const rowBox = (await row.boundingBox())!;
  const badgeBox = (await badge.boundingBox())!;
  expect(badgeBox.x).toBeGreaterThanOrEqual(rowBox.x);
  expect(badgeBox.x + badgeBox.width).toBeLessThanOrEqual(rowBox.x + rowBox.width);
  await expect(badge.evaluate((element) => element.scrollWidth <= element.clientWidth)).resolves.toBe(true);
  const title = await row.locator(".session-title").evaluate((element) => {
    const box = element.getBoundingClientRect();
    return {
      lines: Math.round(box.height / Number.parseFloat(getComputedStyle(element).lineHeight)),
      width: box.width,
    };
  });
  expect(title.lines).toBeLessThanOrEqual(2);
  expect(title.width).toBeGreaterThan(rowBox.width * 0.7);
  const workspace = row.locator(".session-workspace");
  await expect(workspace.isVisible()).resolves.toBe(true);
  await expect(workspace.textContent()).resolves.toBe(claude.workspace);
  const workspaceBox = (await workspace.boundingBox())!;
  expect(workspaceBox.x + workspaceBox.width).toBeLessThanOrEqual(rowBox.x + rowBox.width);
  await screenshot(page, "phone-sessions");

  // The failed Codex turn: its PATH wraps inside the note, and the composer's Send takes the tap.
  await openSessionPage(page, w, codex.id);
  const outcome = page.locator(`[data-turn-id="${failed.id}"] .turn-outcome`);
  await expect(outcome.textContent()).resolves.toContain(path);
  expect(await tooWide(page)).toEqual([]);
  await page.getByLabel("Prompt").fill("[fail] once more");
  const send = page.getByRole("button", { name: "Send" });
  await expectTappable(send);
  await send.tap();
  await page.locator(".turn").nth(1).waitFor({ timeout: 60_000 });
  expect((await w.turns(codex.id)).length).toBe(2);
  await page.locator('.turn[data-phase="failed"]').nth(1).waitFor({ timeout: 60_000 });
  expect(await tooWide(page)).toEqual([]);

  // The turn waiting on an approval: the card fits, and Cancel is on screen and takes the tap.
  await openSessionPage(page, w, claude.id);
  const turn = page.locator(`[data-turn-id="${asking.id}"]`);
  await turn.locator('.permission-card[data-status="pending"]').waitFor({ timeout: 90_000 });
  await page.locator(`[data-turn-id="${asking.id}"][data-waiting="approval"]`).waitFor();
  await turn.locator(".tool .chip-waiting").waitFor();
  expect(await tooWide(page)).toEqual([]);
  // For the README: from the call to the composer (no clock, id or temp path in it, so a rerun writes
  // the same bytes).
  const call = turn.locator(".tool").first();
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  await saveScreenshot(page, "phone-approval", { from: call, to: page.locator(".composer") });
  const cancel = turn.getByRole("button", { name: "Cancel" });
  await expectTappable(cancel);
  await cancel.tap();
  const cancelled: TurnRecord = await w.waitForEnd(asking.id);
  expect(cancelled.phase).toBe("cancelled");
  await page.locator(`[data-turn-id="${asking.id}"][data-phase="cancelled"]`).waitFor();
  expect(await tooWide(page)).toEqual([]);
}, 300_000);
