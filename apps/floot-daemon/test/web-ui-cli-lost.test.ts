import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { waitUntil } from "@bridgeworks/test-harness";
import { expect, test } from "vitest";
import {
  browserTestScope,
  openSessionPage,
  openSignedIn,
  screenshot,
  sendFromPage,
  tooWide,
} from "./browser.js";
import { FlootWorld } from "./daemon-harness.js";

// Issue 31 part 5, in Debian's Chromium against the built daemon and real `claude` on the model
// double: the keeper is SIGKILLed (with its CLI) while a 4-second call runs and the daemon goes on. The
// call was admitted but never reported finished, so the turn waits on a person: its card shows the
// command; "Run it again" carries the turn on, and the call runs once more, once.

const scope = browserTestScope();
const markerName = "cut-marker.txt";
const slowCommand = `sleep 4; echo ran >> ${markerName}`;

test("keeper killed mid-call with the page open: the card shows the command; Run it again runs it once more; on a phone too", async () => {
  const w = await FlootWorld.create("claude", {
    steps: [
      {
        match: { lastUserTextIncludes: "[slow]" },
        response: {
          events: [{ type: "tool_use", id: "toolu_slow", name: "Bash", input: { command: slowCommand } }],
        },
      },
      {
        match: { lastUserTextIncludes: "The user asked you to run it again" },
        response: {
          events: [{ type: "tool_use", id: "toolu_again", name: "Bash", input: { command: slowCommand } }],
        },
      },
      {
        match: { toolResultFor: "toolu_again" },
        response: { events: [{ type: "text", text: "RAN AGAIN" }] },
      },
    ],
  });
  scope.world = w;
  await w.startDaemon({ FLOOT_AFTER_CLI_LOST: "continue" });
  const session = await w.createSession();
  const marker = join(session.workspace, markerName);
  scope.browser = await openSignedIn(w);
  const { page } = scope.browser;
  await page.setViewportSize({ width: 390, height: 844 });
  await openSessionPage(page, w, session.id);
  await sendFromPage(page, "[slow] run the slow command");
  const turnId = (await w.turns(session.id))[0]!.id;
  await waitUntil(() => w.toolAdmissions(turnId).length === 1, 120_000, "the call admitted");

  await w.killKeeper();
  const card = page.locator(`[data-turn-id="${turnId}"] .cli-lost`);
  await card.waitFor({ timeout: 120_000 });
  await expect(card.textContent()).resolves.toContain(slowCommand);
  expect(existsSync(marker)).toBe(false);
  // Waiting on the person: no Retry beside the choices, nothing past the phone's screen.
  await expect(page.locator(`[data-turn-id="${turnId}"] .turn-controls button`).count()).resolves.toBe(0);
  expect(await tooWide(page)).toEqual([]);
  await screenshot(page, "may-have-run-phone");
  // Its own daemon stayed up: the same generation, the turn decided on as a start would.
  expect(await w.turn(turnId)).toMatchObject({ phase: "interrupted", error: { code: "may_have_run" } });

  await card.getByRole("button", { name: "Run it again" }).click();
  await page.getByText("RAN AGAIN").waitFor({ timeout: 90_000 });
  await expect(card.textContent()).resolves.toContain("You chose to run it again.");
  const continuation = (await w.turns(session.id)).find((each) => each.continues === turnId)!;
  expect((await w.waitForEnd(continuation.id)).phase).toBe("completed");
  expect(readFileSync(marker, "utf8")).toBe("ran\n");
  await expect(card.getByRole("button").count()).resolves.toBe(1); // the link to the continuation
});
