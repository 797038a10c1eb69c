import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ScriptedToolCall, toolTurnScript } from "@bridgeworks/model-double";
import type { Page } from "playwright-core";
import { expect, test } from "vitest";
import {
  browserTestScope,
  openBrowser,
  openSessionPage,
  saveScreenshot,
  screenshot,
  sendFromPage,
  signInPage,
  tooWide,
} from "./browser.js";
import { FlootWorld } from "./daemon-harness.js";

// Issue 32, long turns, in Debian's Chromium against the built daemon and real `claude` on the model
// double: a turn's consecutive calls fold into one group that counts them as they come and shows each
// once (after a reload too); Stop stays in the bar above the composer, Esc closes an open group and
// (asked twice) stops the turn; "Jump to latest" appears when events arrive while the reader is up.

const scope = browserTestScope();

/** 9 Reads and 4 quick Bash calls, then a Bash call that runs until the turn is stopped: 14 calls. */
function longTurnCalls(): ScriptedToolCall[] {
  const calls: ScriptedToolCall[] = [];
  for (let i = 0; i < 13; i += 1) {
    calls.push(
      i % 3 === 2 && calls.filter((each) => each.name === "Bash").length < 4
        ? { id: `toolu_bash_${i}`, name: "Bash", input: { command: `echo step ${i}`, description: "run" } }
        : { id: `toolu_read_${i}`, name: "Read", input: { file_path: `notes-${i % 3}.txt` } },
    );
  }
  calls.push({
    id: "toolu_bash_long",
    name: "Bash",
    input: { command: "timeout 590 tail -f /dev/null", description: "wait", timeout: 600_000 },
  });
  return calls;
}

const label = "14 tool calls: 9 Read, 5 Bash";
// Tall enough that the page scrolls with the group open, on either screen.
const prompt = `Read the notes and run the steps.\n${Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n")}`;

async function startLongTurn(viewport: { width: number; height: number; mobile?: boolean }) {
  const calls = longTurnCalls();
  expect(calls.filter((each) => each.name === "Read")).toHaveLength(9);
  const w = await FlootWorld.create("claude", toolTurnScript(calls, "All steps ran."));
  scope.world = w;
  await w.startDaemon();
  const session = await w.createSession({ allowedTools: ["Read", "Bash"] });
  mkdirSync(session.workspace, { recursive: true });
  for (const n of [0, 1, 2]) writeFileSync(join(session.workspace, `notes-${n}.txt`), `note ${n}\n`);
  scope.browser = await openBrowser(viewport);
  const { page } = scope.browser;
  await signInPage(page, w);
  await openSessionPage(page, w, session.id);
  await sendFromPage(page, prompt);
  // Counted live, as the calls come: the last one runs until the turn is stopped.
  await expect
    .poll(() => grouped(page), { timeout: 420_000 })
    .toEqual({ groups: 1, label, ids: calls.map((each) => each.id) });
  return { w, page, calls, turnId: (await w.turns(session.id))[0]!.id };
}

/** The group's label, and the ids of the calls it shows (each once). */
async function grouped(page: Page) {
  const group = page.locator(".turn .tool-group");
  if ((await group.count()) === 0) return { groups: 0 };
  return {
    groups: await group.count(),
    label: await group.first().locator("> summary").textContent(),
    ids: await group
      .first()
      .locator("[data-tool-id]")
      .evaluateAll((cards) => cards.map((card) => card.getAttribute("data-tool-id"))),
  };
}

test("a long turn's calls fold into one group that counts them live and shows each once after a reload; Esc closes it, then asks, then stops the turn; the jump link shows when events arrive below", async () => {
  const { w, page: desktop, calls, turnId } = await startLongTurn({ width: 1100, height: 820 });
  expect((await w.turn(turnId)).phase).toBe("running");
  // Closed by default: the calls take one line; Stop sits above the composer.
  await expect(desktop.locator(".tool-group").getAttribute("open")).resolves.toBeNull();
  await expect(desktop.locator(".composer #stop-turn").isVisible()).resolves.toBe(true);
  await expect(desktop.locator(".turn-bar-note").textContent()).resolves.toBe("Turn #1 is running");
  await saveScreenshot(desktop, "grouped-turn");

  // After a reload the page applies each event once: the same group, each call once.
  await desktop.reload();
  await expect
    .poll(() => grouped(desktop), { timeout: 60_000 })
    .toEqual({ groups: 1, label, ids: calls.map((each) => each.id) });

  // Opened on demand (keyboard): each call listed once, the long one still running.
  await desktop.locator(".tool-group > summary").focus();
  await desktop.keyboard.press("Enter");
  await expect(desktop.locator(".tool-group").getAttribute("open")).resolves.toBe("");
  await expect(desktop.locator(".tool-group [data-tool-id]").count()).resolves.toBe(14);
  await expect(desktop.locator('[data-tool-id="toolu_bash_long"] summary .chip').textContent()).resolves.toBe(
    "running",
  );

  // Esc in the open group closes it; the turn runs on.
  await desktop.keyboard.press("Escape");
  await expect(desktop.locator(".tool-group").getAttribute("open")).resolves.toBeNull();
  await expect(desktop.locator(".turn-bar").getAttribute("data-armed")).resolves.toBeNull();

  // Opened again and scrolled to the top: events that arrive now offer the jump to the latest.
  await desktop.locator(".tool-group > summary").click();
  await desktop.evaluate(() => window.scrollTo({ top: 0 }));
  await expect(desktop.locator("#jump-latest").isVisible()).resolves.toBe(false);

  // A first Esc asks; another key forgets it; Esc twice stops the turn.
  await desktop.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await desktop.keyboard.press("Escape");
  await expect(desktop.locator(".turn-bar-note").textContent()).resolves.toBe(
    "Press Esc again to stop turn #1",
  );
  await expect(
    desktop.locator("#stop-turn").evaluate((button) => button === document.activeElement),
  ).resolves.toBe(true);
  await screenshot(desktop, "grouped-turn-esc");
  await desktop.keyboard.press("a");
  await expect(desktop.locator(".turn-bar-note").textContent()).resolves.toBe("Turn #1 is running");
  expect((await w.turn(turnId)).phase).toBe("running");
  await desktop.evaluate(() => window.scrollTo({ top: 0 }));
  await desktop.keyboard.press("Escape");
  await desktop.keyboard.press("Escape");
  await desktop.locator('.turn[data-phase="cancelled"]').waitFor({ timeout: 90_000 });
  expect((await w.turn(turnId)).phase).toBe("cancelled");
  // The turn's end arrived while the reader was up top: the jump link takes them down.
  await desktop.locator("#jump-latest").waitFor({ timeout: 30_000 });
  await desktop.locator("#jump-latest").click();
  await expect
    .poll(
      () => desktop.evaluate(() => window.innerHeight + window.scrollY >= document.body.scrollHeight - 2),
      {
        timeout: 30_000,
      },
    )
    .toBe(true);
  // Hidden by the scroll event, which comes after the position it reports (CI saw it still shown).
  await expect.poll(() => desktop.locator("#jump-latest").isVisible(), { timeout: 10_000 }).toBe(false);
  await expect(desktop.locator("#stop-turn").isVisible()).resolves.toBe(false);
  await expect(desktop.locator(".tool-group [data-tool-id]").count()).resolves.toBe(14);
}, 600_000);

test("on a 390×844 phone the group fits the screen and Stop above the composer stops the turn", async () => {
  const { w, page: phone, turnId } = await startLongTurn({ width: 390, height: 844, mobile: true });
  await expect(tooWide(phone)).resolves.toEqual([]);
  // The composer and the bar say the same of a turn that runs (a list read before the live "running"
  // event once left the composer at "starting").
  await expect
    .poll(() => phone.locator("#composer-note").textContent(), { timeout: 10_000 })
    .toMatch(/^Turn #1 is running; /);
  await expect(phone.locator(".turn-bar-note").textContent()).resolves.toBe("Turn #1 is running");
  await saveScreenshot(phone, "grouped-turn-phone");
  await phone.locator(".tool-group > summary").click();
  await expect(tooWide(phone)).resolves.toEqual([]);
  // Scrolled to the top, Stop is still on screen, above the composer.
  await phone.evaluate(() => window.scrollTo({ top: 0 }));
  const stop = phone.locator(".composer #stop-turn");
  const box = (await stop.boundingBox())!;
  expect(box.y + box.height).toBeLessThanOrEqual(844);
  expect(box.y).toBeGreaterThanOrEqual(0);
  await stop.click();
  await phone.locator('.turn[data-phase="cancelled"]').waitFor({ timeout: 90_000 });
  expect((await w.turn(turnId)).phase).toBe("cancelled");
  await expect(tooWide(phone)).resolves.toEqual([]);
}, 600_000);
