import { existsSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "@bridgeworks/model-double";
import type { FlootSessionRules, PermissionRequest, TurnRecord } from "@bridgeworks/protocol";
import type { Locator, Page } from "playwright-core";
import { expect, test } from "vitest";
import { bashCallsScript as script } from "./bash-calls-script.js";
import {
  browserTestScope,
  openBrowser,
  openSessionPage,
  saveScreenshot,
  sendFromPage,
  signInPage,
} from "./browser.js";
import { FlootWorld } from "./daemon-harness.js";

// Issue 13's approvals through the web UI: Debian's Chromium, the built daemon, real `claude` on the
// model double. A Bash call outside the session's rules shows as a request card in its turn; allow
// once, allow for this session (the rule listed and removable) and deny (the model reads the message)
// are clicked; a pending card survives a reload and a SIGKILL of the daemon.

const scope = browserTestScope();

const bodyText = (request: RecordedRequest) => JSON.stringify(request.body);

async function pendingCard(page: Page, status = "pending"): Promise<{ card: Locator; requestId: string }> {
  const card = page.locator(`.permission-card[data-status="${status}"]`);
  await card.waitFor({ timeout: 90_000 });
  return { card, requestId: (await card.getAttribute("data-permission-request"))! };
}

async function turnOf(w: FlootWorld, requestId: string): Promise<TurnRecord> {
  const request = await w.client.request<PermissionRequest>("GET", `/v1/permission-requests/${requestId}`);
  return w.turn(request.turnId);
}

test("a Bash call outside the rules is a card: allow once, allow for the session, deny; a pending card survives a reload and a restart", async () => {
  const w = await FlootWorld.create(
    "claude",
    script([
      ["[once]", "toolu_once", "touch once.txt", "ONCE DONE"],
      ["[session-a]", "toolu_sa", "touch session-a.txt", "SESSION A DONE"],
      ["[session-b]", "toolu_sb", "touch session-b.txt", "SESSION B DONE"],
      // A redirection is asked about whatever the rules (measured with 2.1.332).
      ["[deny]", "toolu_deny", "echo nope >> denied.txt", "DENY DONE"],
      ["[durable]", "toolu_durable", "touch durable.txt", "DURABLE DONE"],
    ]),
  );
  scope.world = w;
  await w.startDaemon();
  // Nothing allowed by the session itself; requests expire after 10 minutes (shown on the card).
  const session = await w.createSession({
    allowedTools: [],
    permissionMode: "default",
    permissionTimeoutMs: 600_000,
  });
  const file = (name: string) => join(session.workspace, name);
  scope.browser = await openBrowser({ height: 1000 });
  const { page } = scope.browser;
  await signInPage(page, w);

  // The sessions list marks the session as waiting on a human, pushed by the change stream.
  const first = await w.send(session.id, "[once] touch a file");
  const badge = page.locator(`[data-session-id="${session.id}"] .waiting-badge`);
  await badge.waitFor({ timeout: 90_000 });
  await expect(badge.textContent()).resolves.toBe("needs approval");

  // The card: tool, input, the rules that did not match, the rule "allow for this session" stores, and
  // when the timeout denies it.
  await openSessionPage(page, w, session.id);
  let { card, requestId } = await pendingCard(page);
  await expect(card.locator(".permission-title").textContent()).resolves.toBe("Permission requested: Bash");
  await expect(card.locator(".permission-input").textContent()).resolves.toBe("touch once.txt");
  await expect(card.locator(".permission-rules").textContent()).resolves.toContain("no rule");
  await expect(card.getByLabel("Rule to store for this session").inputValue()).resolves.toBe("Bash(touch:*)");
  await expect(card.locator(".permission-expiry").textContent()).resolves.toMatch(
    /^Denied automatically at .+ \(in \d+ s\) unless you decide\.$/,
  );
  await expect(page.locator(`[data-turn-id="${first.id}"] .permission-card`).count()).resolves.toBe(1);
  await card.scrollIntoViewIfNeeded();
  await saveScreenshot(card, "request-card");

  // A reload shows the same request, still open.
  await page.reload();
  ({ card } = await pendingCard(page));
  await expect(card.getAttribute("data-permission-request")).resolves.toBe(requestId);
  expect(existsSync(file("once.txt"))).toBe(false);

  // Allow once: the call runs, the card shows the outcome.
  await card.getByRole("button", { name: "Allow once" }).click();
  await page.getByText("ONCE DONE").waitFor({ timeout: 90_000 });
  await page.locator(`[data-permission-request="${requestId}"][data-status="allowed"]`).waitFor();
  await expect(page.locator(`[data-permission-request="${requestId}"]`).textContent()).resolves.toContain(
    "Allowed once.",
  );
  // Who decided (issue 36): this page's sign-in, on the card and in the journal.
  const decided = await w.client.request<PermissionRequest>("GET", `/v1/permission-requests/${requestId}`);
  expect(decided.decidedBy).toMatchObject({ via: "web", origin: `http://127.0.0.1:${w.daemon!.file.port}` });
  const signIn = (decided.decidedBy as { signIn: string }).signIn;
  await expect(page.locator(`[data-permission-request="${requestId}"]`).textContent()).resolves.toContain(
    `Decided in the web UI (sign-in ${signIn}).`,
  );
  expect((await w.waitForEnd(first.id)).phase).toBe("completed");
  expect(existsSync(file("once.txt"))).toBe(true);

  // Allow for this session: the rule is listed (removable), and the next matching call is not asked about.
  await sendFromPage(page, "[session-a] touch another");
  ({ card, requestId } = await pendingCard(page));
  await card.getByRole("button", { name: "Allow for this session" }).click();
  await page.getByText("SESSION A DONE").waitFor({ timeout: 90_000 });
  const rule = page.locator('.session-rules li[data-added="1"]');
  await rule.waitFor();
  await expect(rule.locator("code").textContent()).resolves.toBe("Bash(touch:*)");
  expect(existsSync(file("session-a.txt"))).toBe(true);
  const sessionA = await turnOf(w, requestId);
  expect((await w.waitForEnd(sessionA.id)).phase).toBe("completed");

  await sendFromPage(page, "[session-b] and one more");
  await page.getByText("SESSION B DONE").waitFor({ timeout: 90_000 });
  const sessionB = (await w.turns(session.id)).at(-1)!;
  expect((await w.waitForEnd(sessionB.id)).phase).toBe("completed");
  expect((await w.events(sessionB.id)).filter((e) => e.event.type === "permission.requested")).toEqual([]);
  await expect(page.locator(`[data-turn-id="${sessionB.id}"] .permission-card`).count()).resolves.toBe(0);
  expect(existsSync(file("session-b.txt"))).toBe(true);

  // Deny with a message: the model reads it in the tool result, and nothing ran.
  await sendFromPage(page, "[deny] write a line");
  ({ card, requestId } = await pendingCard(page));
  await card.getByLabel("Message to the agent").fill("not here, use the sandbox instead");
  await card.getByRole("button", { name: "Deny" }).click();
  await page.getByText("DENY DONE").waitFor({ timeout: 90_000 });
  await expect(page.locator(`[data-permission-request="${requestId}"]`).textContent()).resolves.toContain(
    "not here, use the sandbox instead",
  );
  const told = w.double.requests.find(
    (each) => bodyText(each).includes("toolu_deny") && bodyText(each).includes("use the sandbox instead"),
  );
  expect(told).toBeDefined();
  expect(existsSync(file("denied.txt"))).toBe(false);

  // The stored rule is removed from the page: later turns ask again.
  await page.getByRole("button", { name: "Remove rule Bash(touch:*)" }).click();
  await page.locator('.session-rules li[data-added="1"]').waitFor({ state: "detached" });
  expect(await w.client.request<FlootSessionRules>("GET", `/v1/sessions/${session.id}/rules`)).toEqual({
    rules: [],
    runAnyCode: [],
  });

  // A pending card survives SIGKILL of the daemon and its keeper: the turn is interrupted, the card says deciding
  // starts a retry, and allowing it runs the call once, in the retry.
  await sendFromPage(page, "[durable] touch it once");
  ({ card, requestId } = await pendingCard(page));
  const asked = await turnOf(w, requestId);
  // The keeper killed too: the CLI goes with it, so the turn is recovered (keeper-restart.test.ts and
  // permission-real.test.ts show a kept one).
  await w.killDaemonAndKeeper();
  await page.locator('body[data-connection="offline"]').waitFor({ timeout: 15_000 });
  await w.startDaemon();
  await page.locator(`[data-turn-id="${asked.id}"][data-phase="interrupted"]`).waitFor({ timeout: 60_000 });
  ({ card } = await pendingCard(page, "orphaned"));
  await expect(card.getAttribute("data-permission-request")).resolves.toBe(requestId);
  await expect(card.textContent()).resolves.toContain("interrupted by a daemon restart");
  await card.getByRole("button", { name: "Allow once" }).click();
  await page.getByText("DURABLE DONE").waitFor({ timeout: 90_000 });
  const retry = (await w.turns(session.id)).find((turn) => turn.retryOf === asked.id)!;
  expect((await w.waitForEnd(retry.id)).phase).toBe("completed");
  expect(existsSync(file("durable.txt"))).toBe(true);
  await expect(
    page.locator(`[data-permission-request="${requestId}"]`).getAttribute("data-status"),
  ).resolves.toBe("allowed");
  expect(await w.client.request("GET", "/v1/permission-requests")).toEqual({ requests: [] });
}, 600_000);
