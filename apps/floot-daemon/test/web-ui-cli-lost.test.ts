import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
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
// command; "Run it again" carries the turn on, and the call runs once more, once. Until decided, the
// session is in the sessions list's inbox ("needs a decision"), and `--notify-command` heard it once.

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
  const moments = join(w.env.root, "moments.jsonl");
  const record = join(w.env.root, "record-moment.sh");
  writeFileSync(record, '#!/bin/sh\ncat >> "$1"\n');
  chmodSync(record, 0o755);
  await w.startDaemon({ FLOOT_AFTER_CLI_LOST: "continue" }, {}, ["--notify-command", `${record} ${moments}`]);
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
  // Its call's card no longer says "running": the turn ended without its result.
  const call = page.locator(`[data-turn-id="${turnId}"] [data-tool-id="toolu_slow"]`);
  await expect(call.getAttribute("data-call-state")).resolves.toBe("may_have_run");
  await expect(call.locator("summary .chip").last().textContent()).resolves.toBe("may have run");
  // Waiting on the person: no Retry beside the choices, nothing past the phone's screen.
  await expect(page.locator(`[data-turn-id="${turnId}"] .turn-controls button`).count()).resolves.toBe(0);
  expect(await tooWide(page)).toEqual([]);
  await screenshot(page, "may-have-run-phone");
  // Its own daemon stayed up: the same generation, the turn decided on as a start would.
  expect(await w.turn(turnId)).toMatchObject({ phase: "interrupted", error: { code: "may_have_run" } });

  // The inbox: the session waits on a person, as for an approval; the notify command heard it once.
  await page.evaluate(() => {
    location.hash = "#/";
  });
  const inboxRow = page.locator(`#inbox [data-session-id="${session.id}"]`);
  await inboxRow.waitFor({ timeout: 30_000 });
  await expect(inboxRow.locator(".waiting-for").textContent()).resolves.toBe(
    "Waiting for your decision on a call that may have run",
  );
  await expect(inboxRow.locator(".waiting-badge").textContent()).resolves.toBe("needs a decision");
  await expect.poll(() => page.title(), { timeout: 10_000 }).toBe("(1) Floot · sessions");
  expect(await tooWide(page)).toEqual([]);
  const heard = () =>
    existsSync(moments)
      ? readFileSync(moments, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { kind: string; turn: string; summary: string })
      : [];
  await waitUntil(
    () => heard().some((moment) => moment.kind === "decision"),
    30_000,
    "the decision's moment",
  );
  const decisions = heard().filter((moment) => moment.kind === "decision");
  expect(decisions).toHaveLength(1);
  expect(decisions[0]).toMatchObject({ turn: turnId });
  expect(decisions[0]!.summary).toContain("waits on you");
  expect(decisions[0]!.summary).toContain("sleep 4");
  // Not also told as a plain turn end.
  expect(heard().filter((moment) => moment.turn === turnId)).toHaveLength(1);
  await inboxRow.locator("a").click();
  await card.waitFor({ timeout: 30_000 });

  await card.getByRole("button", { name: "Run it again" }).click();
  await page.getByText("RAN AGAIN").waitFor({ timeout: 90_000 });
  await expect(card.textContent()).resolves.toContain("You chose to run it again.");
  const continuation = (await w.turns(session.id)).find((each) => each.continues === turnId)!;
  expect((await w.waitForEnd(continuation.id)).phase).toBe("completed");
  expect(readFileSync(marker, "utf8")).toBe("ran\n");
  await expect(card.getByRole("button").count()).resolves.toBe(1); // the link to the continuation
  // Decided: out of the inbox.
  await page.evaluate(() => {
    location.hash = "#/";
  });
  await page.locator(`#all-sessions [data-session-id="${session.id}"]`).waitFor({ timeout: 30_000 });
  await expect(page.locator(`#inbox [data-session-id="${session.id}"]`).count()).resolves.toBe(0);
  await expect.poll(() => page.title(), { timeout: 10_000 }).toBe("Floot · sessions");
});
