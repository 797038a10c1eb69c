import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toolTurnScript } from "@bridgeworks/model-double";
import type { FlootSession } from "@bridgeworks/protocol";
import type { Locator, Page } from "playwright-core";
import { expect, test } from "vitest";
import { bashCallsScript } from "./bash-calls-script.js";
import {
  browserTestScope,
  openSessionPage,
  openSignedIn,
  pageOrigin,
  screenshot,
  sendFromPage,
  tooWide,
} from "./browser.js";
import { FlootWorld } from "./daemon-harness.js";
import { startDaemonWithoutCodex } from "./ui-long-path.js";

// Issue 32, states said right, in Debian's Chromium against the built daemon and real `claude` on the
// model double: a turn waiting on an approval reads so (its chip, the call's card, the composer's
// note), not "running"; an Edit that failed says it was not applied; a failed turn's error is shown once.

const scope = browserTestScope();

/** What the page says of a turn's state: its chip, each call's status, the composer's note. */
async function said(page: Page, turnId: string) {
  const turn = page.locator(`[data-turn-id="${turnId}"]`);
  return {
    chip: await turn.locator(".turn-head .chip").textContent(),
    calls: await turn.locator(".tool summary .chip").allTextContents(),
    composer: await page.locator("#composer-note").textContent(),
  };
}

test("a turn waiting on an approval reads 'waiting for your approval' in its chip, its call and the composer, after a reload too; once allowed it runs", async () => {
  const w = await FlootWorld.create(
    "claude",
    bashCallsScript([["[ask]", "toolu_waits", "touch waited.txt", "WAITED DONE"]]),
  );
  scope.world = w;
  await w.startDaemon();
  const session = await w.createSession({ allowedTools: [], permissionMode: "default" });
  scope.browser = await openSignedIn(w);
  const { page } = scope.browser;
  await openSessionPage(page, w, session.id);
  await sendFromPage(page, "[ask] touch a file");
  const card = page.locator('.permission-card[data-status="pending"]');
  await card.waitFor({ timeout: 90_000 });
  const turnId = (await w.turns(session.id))[0]!.id;
  await page.locator(`[data-turn-id="${turnId}"][data-waiting="approval"]`).waitFor();
  const waiting = {
    chip: "waiting for your approval",
    calls: ["waiting for your approval"],
    composer:
      "Turn #1 is waiting for your approval (the request is in the turn); a prompt sent now waits for it.",
  };
  await expect.poll(() => said(page, turnId), { timeout: 30_000 }).toEqual(waiting);
  expect((await w.turn(turnId)).phase).toBe("running");
  await screenshot(page, "waiting-for-approval");

  // The list says it too; on a desktop its row keeps the title on one line beside the badge, the
  // workspace under them, nothing past the screen.
  await page.goto(`${pageOrigin(w)}/#/`);
  const row = page.locator(`[data-session-id="${session.id}"]`);
  await row.locator(".waiting-badge").waitFor({ timeout: 30_000 });
  await expect(row.locator(".session-turn .chip").textContent()).resolves.toBe("waiting for your approval");
  await expect(row.locator(".waiting-badge").textContent()).resolves.toBe("needs approval");
  // A change the list hears re-renders the row: measure the one that is there (CI measured a detached one).
  const box = async (locator: Locator) => {
    let found: Awaited<ReturnType<Locator["boundingBox"]>> = null;
    await expect
      .poll(
        async () => {
          found = await locator.boundingBox();
          return found !== null;
        },
        { timeout: 10_000 },
      )
      .toBe(true);
    return found!;
  };
  const rowBox = await box(row);
  const badgeBox = await box(row.locator(".waiting-badge"));
  const title = row.locator(".session-title");
  const titleLines = await title.evaluate((element) =>
    Math.round(
      element.getBoundingClientRect().height / Number.parseFloat(getComputedStyle(element).lineHeight),
    ),
  );
  expect(badgeBox.x + badgeBox.width).toBeLessThanOrEqual(rowBox.x + rowBox.width);
  expect(titleLines).toBe(1);
  // Under the title, not squeezed beside it.
  const titleBox = await box(title);
  expect((await box(row.locator(".session-workspace"))).y).toBeGreaterThanOrEqual(
    titleBox.y + titleBox.height,
  );
  expect(await tooWide(page)).toEqual([]);
  await screenshot(page, "sessions-waiting-desktop");
  await openSessionPage(page, w, session.id);

  await page.reload();
  await page.locator('.permission-card[data-status="pending"]').waitFor({ timeout: 60_000 });
  await expect.poll(() => said(page, turnId), { timeout: 30_000 }).toEqual(waiting);

  await page.getByRole("button", { name: "Allow once" }).click();
  await page.getByText("WAITED DONE").waitFor({ timeout: 90_000 });
  await page.locator(`[data-turn-id="${turnId}"][data-phase="completed"]`).waitFor();
  await expect(said(page, turnId)).resolves.toEqual({
    chip: "completed",
    calls: ["done"],
    composer: "Ctrl+Enter sends",
  });
  await expect(page.locator("[data-waiting]").count()).resolves.toBe(0);
}, 300_000);

test("an Edit that failed says it was not applied, its diff marked so", async () => {
  const w = await FlootWorld.create(
    "claude",
    toolTurnScript(
      [
        { id: "toolu_read", name: "Read", input: { file_path: "notes.txt" } },
        {
          id: "toolu_edit",
          name: "Edit",
          input: { file_path: "notes.txt", old_string: "no such line", new_string: "a new line" },
        },
      ],
      "The edit did not go through.",
    ),
  );
  scope.world = w;
  await w.startDaemon();
  const session: FlootSession = await w.createSession({ allowedTools: ["Read", "Edit"] });
  mkdirSync(session.workspace, { recursive: true });
  writeFileSync(join(session.workspace, "notes.txt"), "alpha\nbeta\n");
  scope.browser = await openSignedIn(w);
  const { page } = scope.browser;
  await openSessionPage(page, w, session.id);
  await sendFromPage(page, "change the notes");
  await page.locator('.turn[data-phase="completed"]').waitFor({ timeout: 90_000 });
  const turn = (await w.turns(session.id))[0]!;
  const completed = (await w.events(turn.id)).find(
    (each) => each.event.type === "tool.completed" && each.event.toolId === "toolu_edit",
  );
  expect(completed?.event).toMatchObject({ isError: true });

  const edit = page.locator('[data-tool-id="toolu_edit"]');
  await expect(edit.getAttribute("data-applied")).resolves.toBe("false");
  await expect(edit.locator("summary .chip").textContent()).resolves.toBe("not applied");
  await expect(edit.locator(".tool-section-label").first().textContent()).resolves.toBe(
    "Not applied: the edit failed (the error is below)",
  );
  await expect(edit.locator(".tool-output.is-error").textContent()).resolves.toContain("not found");
  // The lines it meant to change are drawn as a proposal: no added or removed line is coloured as one.
  const colours = await edit
    .locator(".diff-add, .diff-remove")
    .evaluateAll((lines) => lines.map((line) => getComputedStyle(line).backgroundColor));
  expect(colours.length).toBe(2);
  expect(new Set(colours)).toEqual(new Set(["rgba(0, 0, 0, 0)"]));
  await expect(
    edit.locator("summary .diff-stat").evaluate((stat) => getComputedStyle(stat).textDecorationLine),
  ).resolves.toBe("line-through");
  expect(readFileSync(join(session.workspace, "notes.txt"), "utf8")).toBe("alpha\nbeta\n");
  await edit.scrollIntoViewIfNeeded();
  await screenshot(page, "edit-not-applied");

  // On a 390×844 phone: still said, and the diff scrolls inside its card, not the page.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await edit.locator("summary .chip").waitFor({ timeout: 60_000 });
  await expect(edit.locator("summary .chip").textContent()).resolves.toBe("not applied");
  await edit.scrollIntoViewIfNeeded();
  await expect(edit.locator("summary .chip").isVisible()).resolves.toBe(true);
  await expect(tooWide(page)).resolves.toEqual([]);
}, 300_000);

test("a turn that failed shows its error once, live and after a reload", async () => {
  const w = await FlootWorld.create("claude", { steps: [] });
  scope.world = w;
  const path = await startDaemonWithoutCodex(w);
  const session = await w.client.request<FlootSession>("POST", "/v1/sessions", { backend: "codex" });
  scope.browser = await openSignedIn(w);
  const { page } = scope.browser;
  await openSessionPage(page, w, session.id);
  await sendFromPage(page, "[fail] refactor the parser");
  await page.locator('.turn[data-phase="failed"]').waitFor({ timeout: 60_000 });
  const turn = (await w.turns(session.id))[0]!;
  expect(turn.error?.code).toBe("cli_not_found");
  const events = await w.events(turn.id);
  expect(events.filter((each) => each.event.type === "error")).toHaveLength(1);

  const shownErrors = () =>
    page
      .locator(`[data-turn-id="${turn.id}"]`)
      .getByText(path)
      .evaluateAll((found) => found.filter((each) => (each as HTMLElement).offsetParent !== null).length);
  await expect.poll(shownErrors, { timeout: 10_000 }).toBe(1);
  await expect(page.locator(`[data-turn-id="${turn.id}"] .turn-outcome`).textContent()).resolves.toBe(
    `Failed. ${turn.error!.message} `,
  );
  await page.reload();
  await page.locator('.turn[data-phase="failed"]').waitFor({ timeout: 60_000 });
  await expect.poll(shownErrors, { timeout: 10_000 }).toBe(1);
  await expect(page.locator(`[data-turn-id="${turn.id}"] .turn-outcome`).textContent()).resolves.toContain(
    turn.error!.message,
  );

  // On a 390×844 phone: once, and its long PATH inside the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await page.locator('.turn[data-phase="failed"]').waitFor({ timeout: 60_000 });
  await expect.poll(shownErrors, { timeout: 10_000 }).toBe(1);
  await expect(tooWide(page)).resolves.toEqual([]);
}, 300_000);
