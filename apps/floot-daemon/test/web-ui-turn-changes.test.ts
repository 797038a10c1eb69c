import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toolTurnScript } from "@bridgeworks/model-double";
import { expect, test } from "vitest";
import {
  browserTestScope,
  openBrowser,
  openSessionPage,
  openSignedIn,
  saveScreenshot,
  sendFromPage,
  signInPage,
  tooWide,
} from "./browser.js";
import { FlootWorld } from "./daemon-harness.js";

// Issue 32, a turn's changes, in Debian's Chromium against the built daemon and real `claude` on the
// model double: at the turn's end the page lists the files its edits changed, with +/− line counts,
// from the diffs it already shows; an edit that failed changed nothing and is not listed. The session
// page sums its turns' usage.

const scope = browserTestScope();

test("at a turn's end the page lists the files it changed with their +/− counts, not a failed edit's", async () => {
  const w = await FlootWorld.create(
    "claude",
    toolTurnScript(
      [
        { id: "toolu_read", name: "Read", input: { file_path: "notes.txt" } },
        {
          id: "toolu_edit",
          name: "Edit",
          input: { file_path: "notes.txt", old_string: "beta", new_string: "BETA" },
        },
        {
          id: "toolu_write",
          name: "Write",
          input: { file_path: "plan.md", content: "# Plan\n\none\ntwo\n" },
        },
        {
          id: "toolu_bad",
          name: "Edit",
          input: { file_path: "notes.txt", old_string: "no such line", new_string: "x" },
        },
      ],
      "Changed the notes and wrote a plan.",
    ),
  );
  scope.world = w;
  await w.startDaemon();
  const session = await w.createSession({ allowedTools: ["Read", "Edit", "Write"] });
  mkdirSync(session.workspace, { recursive: true });
  writeFileSync(join(session.workspace, "notes.txt"), "alpha\nbeta\n");
  scope.browser = await openSignedIn(w);
  const { page } = scope.browser;
  await openSessionPage(page, w, session.id);
  await sendFromPage(page, "change the notes and plan");
  const turn = page.locator('.turn[data-phase="completed"]');
  await turn.waitFor({ timeout: 300_000 });
  const listed = () =>
    turn.locator(".turn-changes li").evaluateAll((items) => items.map((item) => item.textContent));
  await expect.poll(listed, { timeout: 30_000 }).toEqual(["notes.txt +1 −1", "plan.md +4 −0"]);
  await expect(turn.locator(".turn-changes-title").textContent()).resolves.toBe("Changed 2 files");
  await expect(turn.locator('[data-tool-id="toolu_bad"] summary .chip').textContent()).resolves.toBe(
    "not applied",
  );
  // The session's totals: with one turn, its usage line.
  const usage = await turn.locator(".usage").textContent();
  expect(usage).toMatch(/ in · .* out/);
  // The context use, from Claude Code's own figures: the last request's tokens of the model's window.
  expect(usage).toMatch(/ · context [\d.]+k? of [\d.]+[kM] \(\d+%\)$/);
  await expect
    .poll(() => page.locator(".session-totals").textContent(), { timeout: 30_000 })
    .toBe(`Session total (1 turn): ${usage}`);
  await saveScreenshot(page, "turn-changes", {
    from: turn.locator(".turn-changes"),
    to: page.locator(".session-totals"),
  });

  // The same after a reload, each file once.
  await page.reload();
  await page.locator('.turn[data-phase="completed"] .turn-changes li').first().waitFor({ timeout: 60_000 });
  await expect.poll(listed, { timeout: 30_000 }).toEqual(["notes.txt +1 −1", "plan.md +4 −0"]);
  await expect(tooWide(page)).resolves.toEqual([]);

  // On a 390×844 phone: the same list and totals, inside the screen.
  await scope.browser.close();
  scope.browser = await openBrowser({ width: 390, height: 844, mobile: true });
  const phone = scope.browser.page;
  await signInPage(phone, w);
  await openSessionPage(phone, w, session.id);
  const phoneTurn = phone.locator('.turn[data-phase="completed"]');
  await phoneTurn.locator(".turn-changes li").first().waitFor({ timeout: 60_000 });
  await expect
    .poll(() => phoneTurn.locator(".turn-changes li").allTextContents(), { timeout: 30_000 })
    .toEqual(["notes.txt +1 −1", "plan.md +4 −0"]);
  await expect
    .poll(() => phone.locator(".session-totals").textContent(), { timeout: 30_000 })
    .toBe(`Session total (1 turn): ${usage}`);
  await expect(tooWide(phone)).resolves.toEqual([]);
  for (const part of [phoneTurn.locator(".turn-changes"), phone.locator(".session-totals")]) {
    await part.scrollIntoViewIfNeeded();
    const box = (await part.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
  }
  await phoneTurn.locator(".turn-changes").evaluate((element) => element.scrollIntoView({ block: "center" }));
  await saveScreenshot(phone, "turn-changes-phone", {
    from: phoneTurn.locator(".turn-changes"),
    to: phone.locator(".session-totals"),
  });
}, 420_000);
