import type { PermissionRequest } from "@bridgeworks/protocol";
import { waitUntil } from "@bridgeworks/test-harness";
import type { Page } from "playwright-core";
import { expect, test } from "vitest";
import { bashCallsScript } from "./bash-calls-script.js";
import { browserTestScope, openBrowser, pageOrigin, signInPage, tooWide } from "./browser.js";
import { FlootWorld } from "./daemon-harness.js";

// Issue 32's browser notifications: Debian's Chromium with the notifications permission granted, the
// built daemon, real `claude` on the model double. Notifications are off until the page's control turns
// them on; then a pending approval while the page is hidden is one notification, and neither a reload
// nor a daemon restart raises it again (the turns that end after the restart are one each).
//
// What the test adds to the browser, and why: an init script wraps `window.Notification` to record each
// construction (the real one is still constructed), and one makes the page hidden on the test's word.
// Headless Chromium reports every page "visible" whatever is done to its window or tabs (measured here
// with Chromium 156: a second tab brought to the front, `Browser.setWindowBounds` minimized,
// `Target.activateTarget`; also w3c/webdriver#1718), so `document.visibilityState` and `hidden` read a
// flag the test sets in sessionStorage (a hidden tab stays hidden across its reload). Both are the
// browser's APIs; nothing of the page's own code is replaced.

const scope = browserTestScope();

interface Recorded {
  title: string;
  body: string;
  tag: string;
}

const recordNotifications = () => {
  const Real = window.Notification;
  const Recording = function (this: unknown, title: string, options?: NotificationOptions) {
    const notification = new Real(title, options);
    (window as unknown as { recordNotification: (n: unknown) => void }).recordNotification({
      title,
      body: options?.body ?? "",
      tag: options?.tag ?? "",
    });
    return notification;
  } as unknown as typeof Notification;
  Object.defineProperty(Recording, "permission", { get: () => Real.permission });
  Recording.requestPermission = Real.requestPermission.bind(Real);
  Recording.prototype = Real.prototype;
  window.Notification = Recording;
};

const hideOnRequest = () => {
  const hidden = () => sessionStorage.getItem("test-page-hidden") === "1";
  Object.defineProperty(document, "visibilityState", { get: () => (hidden() ? "hidden" : "visible") });
  Object.defineProperty(document, "hidden", { get: hidden });
};

async function hide(page: Page): Promise<void> {
  await page.evaluate(() => {
    sessionStorage.setItem("test-page-hidden", "1");
    document.dispatchEvent(new Event("visibilitychange"));
  });
}

const viewports = [
  ["desktop", {}],
  ["a 390×844 phone", { width: 390, height: 844, mobile: true }],
] as const;

test.each(viewports)(
  "%s: a pending approval while the page is hidden is one notification, not raised again by a reload or a daemon restart",
  async (_, viewport) => {
    const w = await FlootWorld.create("claude", {
      steps: [
        ...bashCallsScript([["[approve]", "toolu_approve", "touch approved.txt", "APPROVED DONE"]]).steps,
        {
          match: { lastUserTextIncludes: "[later]" },
          repeat: true,
          response: { events: [{ type: "text", text: "LATER DONE" }] },
        },
      ],
    });
    scope.world = w;
    await w.startDaemon();
    const session = await w.createSession({ allowedTools: [], permissionMode: "default" });
    scope.browser = await openBrowser(viewport);
    const { context, page } = scope.browser;
    const recorded: Recorded[] = [];
    await context.exposeFunction("recordNotification", (notification: Recorded) =>
      recorded.push(notification),
    );
    await context.addInitScript(recordNotifications);
    await context.addInitScript(hideOnRequest);
    await context.grantPermissions(["notifications"], { origin: pageOrigin(w) });
    await signInPage(page, w);

    // Off by default, even with the browser's permission granted; the control turns them on.
    const control = page.locator("#notifications");
    await expect(control.textContent()).resolves.toBe("Notify me");
    await expect(control.isVisible()).resolves.toBe(true);
    await expect(tooWide(page)).resolves.toEqual([]);
    await expect(control.getAttribute("aria-pressed")).resolves.toBe("false");
    await control.click();
    await expect.poll(() => control.textContent()).toBe("Notifications on");

    // Hidden, a turn asks for an approval: one notification, tagged with the request.
    await hide(page);
    const first = await w.send(session.id, "[approve] touch a file");
    await waitUntil(() => recorded.length > 0, 90_000, "a notification");
    const [request] = (
      await w.client.request<{ requests: PermissionRequest[] }>("GET", "/v1/permission-requests")
    ).requests;
    expect(recorded).toEqual([
      {
        title: "Floot: approval needed",
        body: "Approve Bash: touch approved.txt",
        tag: `approval:${request!.id}`,
      },
    ]);
    const row = page.locator(`#inbox [data-session-id="${session.id}"]`);
    await row.waitFor();
    await expect(tooWide(page)).resolves.toEqual([]);

    // A reload (still hidden, notifications still on): the page shows the request and hears the session
    // change again (a turn queued behind it), and raises nothing.
    await page.reload();
    await row.waitFor({ timeout: 30_000 });
    await expect(control.textContent()).resolves.toBe("Notifications on");
    const later = await w.send(session.id, "[later] and then this");
    await row.getByText("+1 queued").waitFor({ timeout: 30_000 });
    expect(recorded).toHaveLength(1);

    // A daemon restart: the asking turn runs on under its keeper and its request stays pending; the
    // page reconnects and raises nothing for it. Allowed then, both turns end: one notification each.
    await w.killDaemon();
    await page.locator('body[data-connection="offline"]').waitFor({ timeout: 15_000 });
    await w.startDaemon();
    await page.locator('body[data-connection="online"]').waitFor({ timeout: 30_000 });
    await row.waitFor();
    expect(recorded).toHaveLength(1);
    expect((await w.floot("approval", "allow", request!.id)).code).toBe(0);
    expect((await w.waitForEnd(first.id, 90_000)).phase).toBe("completed");
    expect((await w.waitForEnd(later.id, 90_000)).phase).toBe("completed");
    await waitUntil(() => recorded.length >= 3, 30_000, "both turns' ends notified");
    expect(recorded).toEqual([
      {
        title: "Floot: approval needed",
        body: "Approve Bash: touch approved.txt",
        tag: `approval:${request!.id}`,
      },
      {
        title: "Floot: a turn ended",
        body: "Turn 1 completed: [approve] touch a file",
        tag: `turn:${first.id}`,
      },
      {
        title: "Floot: a turn ended",
        body: "Turn 2 completed: [later] and then this",
        tag: `turn:${later.id}`,
      },
    ]);

    // Visible again: a turn that ends is shown by the page itself, not notified. Then turned off. (No
    // longer waiting, the session is in the list below the inbox.)
    const ended = (seq: number) =>
      page
        .locator(`.session-row[data-session-id="${session.id}"] .session-turn`)
        .filter({ has: page.locator(".phase-completed") })
        .filter({ hasText: `#${seq} ` });
    await page.evaluate(() => sessionStorage.removeItem("test-page-hidden"));
    const visible = await w.send(session.id, "[later] while you look");
    expect((await w.waitForEnd(visible.id, 90_000)).phase).toBe("completed");
    await ended(3).waitFor({ timeout: 30_000 });
    await control.click();
    await expect.poll(() => control.textContent()).toBe("Notify me");
    await hide(page);
    const off = await w.send(session.id, "[later] with notifications off");
    expect((await w.waitForEnd(off.id, 90_000)).phase).toBe("completed");
    await ended(4).waitFor({ timeout: 30_000 });
    expect(recorded).toHaveLength(3);
  },
  300_000,
);
