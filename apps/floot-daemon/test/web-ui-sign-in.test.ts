import { setTimeout as sleep } from "node:timers/promises";
import type { Page } from "playwright-core";
import { expect, test } from "vitest";
import { browserTestScope, openBrowser, pageOrigin, signInLink, tooWide } from "./browser.js";
import { FlootWorld } from "./daemon-harness.js";

// Issue 32, tabs and sign-in, in Debian's Chromium against the built daemon: a link opened in a tab
// that is already open signs it in where it is (no reload); a new tab of the origin is signed in by an
// open one (a BroadcastChannel handshake), with nothing added to any persistent storage; a used or an
// expired link says which and how to get a fresh one, and a signed-out tab offers no form to fill in.

const scope = browserTestScope();

/** What the signed-out page says, and whether anything of the signed-in pages is there. */
async function signedOutPage(page: Page) {
  const section = page.locator(".signed-out");
  await section.waitFor();
  return {
    reason: await section.getAttribute("data-reason"),
    why: await section.locator(".signed-out-why").textContent(),
    says: await section.textContent(),
    forms: await page.locator("main form, main input, main select, main textarea").count(),
  };
}

/** The tab's stored sign-in, what the origin keeps in localStorage, and how many key records it holds. */
function storage(page: Page) {
  return page.evaluate(async () => {
    const database = await new Promise<IDBDatabase>((resolve) => {
      const opening = indexedDB.open("floot");
      opening.onsuccess = () => resolve(opening.result);
    });
    const keyRecords = await new Promise<number>((resolve) => {
      const counting = database.transaction("page-keys").objectStore("page-keys").count();
      counting.onsuccess = () => resolve(counting.result);
    });
    database.close();
    return {
      signIn: sessionStorage.getItem("floot.credential"),
      localStorage: localStorage.length,
      keyRecords,
    };
  });
}

test("a link signs in an open signed-out tab without a reload; a new tab is signed in by an open one; a used or expired link says which", async () => {
  const w = await FlootWorld.create("claude", { steps: [] });
  scope.world = w;
  await w.startDaemon();
  const session = await w.createSession();
  const origin = pageOrigin(w);
  // Left unused until it has expired.
  const expiring = await signInLink(w);
  const expiresAt = Date.now() + 60_000;

  scope.browser = await openBrowser();
  const { page, context } = scope.browser;

  // A tab with no sign-in says what to do, and shows no New session form.
  await page.goto(`${origin}/`);
  let shown = await signedOutPage(page);
  expect(shown).toMatchObject({ reason: "no_sign_in", forms: 0 });
  expect(shown.says).toContain("floot open");
  await expect(page.getByRole("button", { name: "Create session" }).count()).resolves.toBe(0);

  // A link opened in that tab signs it in where it is: the page is not loaded again.
  await page.evaluate(() => {
    (window as unknown as { loadedOnce: boolean }).loadedOnce = true;
  });
  const link = await signInLink(w);
  await page.goto(link);
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
  await page.locator('body[data-connection="online"]').waitFor();
  expect(page.url()).toBe(`${origin}/#/`);
  await expect(page.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce)).resolves.toBe(
    true,
  );
  const first = await storage(page);
  expect(first).toMatchObject({ localStorage: 0, keyRecords: 1 });

  // A new tab of the origin (as a Ctrl+click on a session opens) is signed in by the open one: the same
  // sign-in in its own sessionStorage, no new key, nothing in localStorage, no cookie.
  const second = await context.newPage();
  await second.goto(`${origin}/#/s/${session.id}`);
  await second.locator(".session-head h1 code").waitFor();
  await second.locator('body[data-connection="online"]').waitFor();
  await expect(storage(second)).resolves.toEqual(first);
  expect(await context.cookies()).toEqual([]);

  // With no signed-in tab left, a link used already says so.
  const third = await context.newPage();
  await page.close();
  await second.close();
  await third.goto(link);
  shown = await signedOutPage(third);
  expect(shown).toMatchObject({
    reason: "sign_in_link_used",
    why: "This sign-in link was used already: each link signs in once.",
    forms: 0,
  });
  expect(shown.says).toContain("floot open");
  expect((await storage(third)).signIn).toBeNull();

  // An expired one says that (opened in the signed-out tab, as a user pastes it there).
  await sleep(Math.max(0, expiresAt - Date.now() + 1_000));
  await third.goto(expiring);
  await expect
    .poll(async () => (await signedOutPage(third)).reason, { timeout: 30_000 })
    .toBe("sign_in_link_expired");
  expect((await signedOutPage(third)).why).toBe(
    "This sign-in link expired: a link works for 60 seconds after floot open made it.",
  );

  // And a fresh link signs that tab in, where it is.
  await third.goto(await signInLink(w));
  await third.getByRole("heading", { name: "Sessions" }).waitFor();
  await third.locator('body[data-connection="online"]').waitFor();

  // The same on a 390×844 phone, each page inside the screen: signed out, signed in by a link, a new
  // tab signed in by the open one, the used link said so.
  await scope.browser.close();
  scope.browser = await openBrowser({ width: 390, height: 844, mobile: true });
  const phone = scope.browser;
  await phone.page.goto(`${origin}/`);
  expect(await signedOutPage(phone.page)).toMatchObject({ reason: "no_sign_in", forms: 0 });
  await expect(tooWide(phone.page)).resolves.toEqual([]);
  const phoneLink = await signInLink(w);
  await phone.page.goto(phoneLink);
  await phone.page.getByRole("heading", { name: "Sessions" }).waitFor();
  await expect(tooWide(phone.page)).resolves.toEqual([]);
  const phoneTab = await phone.context.newPage();
  await phoneTab.goto(`${origin}/#/s/${session.id}`);
  await phoneTab.locator(".session-head h1 code").waitFor();
  await phoneTab.locator('body[data-connection="online"]').waitFor();
  await expect(tooWide(phoneTab)).resolves.toEqual([]);
  const phoneLast = await phone.context.newPage();
  await phone.page.close();
  await phoneTab.close();
  await phoneLast.goto(phoneLink);
  expect(await signedOutPage(phoneLast)).toMatchObject({ reason: "sign_in_link_used", forms: 0 });
  await expect(tooWide(phoneLast)).resolves.toEqual([]);
}, 300_000);
