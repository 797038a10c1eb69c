import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { toolResultText } from "@bridgeworks/model-double";
import type { FlootSessionRules, PermissionRequest } from "@bridgeworks/protocol";
import { waitUntil } from "@bridgeworks/test-harness";
import { describe, expect, test } from "vitest";
import type { ClientError } from "../src/client/client-error.js";
import { bashCallsScript as script } from "./bash-calls-script.js";
import { browserTestScope, openBrowser, openSessionPage, saveScreenshot, signInPage } from "./browser.js";
import { bundlePath, FlootWorld } from "./daemon-harness.js";

// Issue 36, item 2, as a hostile model plays it against the real claude 2.1.332 (on the model double)
// and the built daemon, decided the way a person does: `floot approval` and the web UI in Debian's
// Chromium. On main c6954f2 "allow for this session" on `python3 -c "print(6*7)"` stored
// `Bash(python3:*)`, which let the model's next Python run unasked, and the card and the API cut a
// command at 2,000 characters, hiding the tail that "Allow once" then ran.

const scope = browserTestScope();

/** `floot <argv> --state … --json` as the user runs it: its stdout parsed, and its stderr. */
async function floot(w: FlootWorld, ...argv: string[]): Promise<{ json: unknown; stderr: string }> {
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [bundlePath, ...argv, "--state", w.stateDir, "--json"],
    { env: { ...process.env, HOME: w.env.home }, maxBuffer: 16 * 1024 * 1024 },
  );
  return { json: JSON.parse(stdout), stderr };
}

/** The open request of `toolCallKey`, or the end of `turnId` (a call that ran unasked), whichever comes. */
async function askedOrEnded(
  w: FlootWorld,
  turnId: string,
  toolCallKey: string,
): Promise<PermissionRequest | undefined> {
  let asked: PermissionRequest | undefined;
  await waitUntil(
    async () => {
      const { requests } = (await floot(w, "approval", "list")).json as { requests: PermissionRequest[] };
      asked = requests.find((request) => request.toolCallKey === toolCallKey);
      return asked !== undefined || ["completed", "failed"].includes((await w.turn(turnId)).phase);
    },
    90_000,
    `a request for ${toolCallKey} or the end of turn ${turnId}\n${w.daemon?.process.stderr()}`,
  );
  return asked;
}

const resultOf = (w: FlootWorld, id: string) =>
  w.double.requests.map((request) => toolResultText("anthropic", request.body, id)).find(Boolean);

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

async function refusal(decision: Promise<unknown>): Promise<ClientError> {
  return decision.then(
    () => {
      throw new Error("the decision was accepted");
    },
    (error: unknown) => error as ClientError,
  );
}

describe("issue 36, item 2: approving more than was shown", () => {
  test('allow for this session on python3 -c "print(6*7)" stores that exact command: it runs unasked again, another python3 command is asked about', async () => {
    const python = 'python3 -c "print(6*7)"';
    // Also what Claude Code reads `Bash(python3 -c "print(6*7)")` as: a wildcard, `*` any text.
    const other = "python3 -c \"print(6);open('pwned.txt', 'w');print(7)\"";
    const w = await FlootWorld.create(
      "claude",
      script([
        ["[py-first]", "toolu_py_first", python, "FIRST DONE"],
        ["[py-again]", "toolu_py_again", python, "AGAIN DONE"],
        ["[py-other]", "toolu_py_other", other, "OTHER DONE"],
      ]),
    );
    scope.world = w;
    await w.startDaemon();
    const session = await w.createSession({ allowedTools: [], permissionMode: "default" });

    const first = await w.send(session.id, "[py-first] compute");
    const request = await askedOrEnded(w, first.id, "toolu_py_first");
    expect(request).toMatchObject({ inputSummary: python });
    // "Allow for this session" with the suggestion, as a person types it: the CLI prints the whole call.
    const allowed = await floot(w, "approval", "allow", request!.id, "--session");
    expect((await w.waitForEnd(first.id)).phase).toBe("completed");
    expect(resultOf(w, "toolu_py_first")).toBe("42");

    // The model's next, different Python is asked about, not run (main: it ran under Bash(python3:*)).
    const attack = await w.send(session.id, "[py-other] and now this");
    const asked = await askedOrEnded(w, attack.id, "toolu_py_other");
    expect(existsSync(join(session.workspace, "pwned.txt"))).toBe(false);
    expect(asked).toMatchObject({ status: "pending", inputSummary: other });
    const denied = await floot(w, "approval", "deny", asked!.id, "--message", "no");
    expect(denied.stderr).toContain(`\n    ${other}\n`);
    expect((await w.waitForEnd(attack.id)).phase).toBe("completed");
    expect(existsSync(join(session.workspace, "pwned.txt"))).toBe(false);

    // What was stored is the exact command, in Claude Code's escapes, and it lets no other code run.
    expect(allowed.stderr).toContain(`\n    ${python}\n`);
    const exact = 'Bash(python3 -c "print\\(6\\*7\\)")';
    expect(request!.suggestedRule).toBe(exact);
    expect((await floot(w, "approval", "rules", session.id)).json).toEqual({
      rules: [exact],
      runAnyCode: [],
    });

    // The same command runs unasked in a later turn: Claude Code asks (the rule is kept out of
    // --allowedTools), the daemon answers from the rule, nobody is asked.
    const again = await w.send(session.id, "[py-again] once more");
    expect((await w.waitForEnd(again.id, 90_000)).phase).toBe("completed");
    expect(resultOf(w, "toolu_py_again")).toBe("42");
    const againAsked = (await w.events(again.id)).filter((e) => e.event.type === "permission.requested");
    expect(againAsked).toEqual([]);
  }, 400_000);

  test("a command past 2,000 characters is listed and carded whole, its block scrolls; a stale or wrong digest is refused; the card's allow runs it", async () => {
    const command = `touch shown-head.txt; : ${"padding ".repeat(300)}; touch hidden-tail.txt`;
    expect(command.length).toBeGreaterThan(2_400);
    const w = await FlootWorld.create("claude", script([["[long]", "toolu_long", command, "LONG DONE"]]));
    scope.world = w;
    await w.startDaemon();
    // A rule the person set that lets the agent run any Python: stored, and marked so.
    const session = await w.createSession({ allowedTools: ["Bash(python3:*)"], permissionMode: "default" });
    const turn = await w.send(session.id, "[long] tidy up");
    const request = await askedOrEnded(w, turn.id, "toolu_long");

    // The API and `floot approval list --json` hold all of it (main: 1,999 characters and "…"), and the
    // list as a person reads it prints all of it.
    expect(request?.inputSummary).toBe(command);
    const { stdout: listed } = await promisify(execFile)(
      process.execPath,
      [bundlePath, "approval", "list", "--state", w.stateDir],
      { env: { ...process.env, HOME: w.env.home } },
    );
    expect(listed).toContain(`\n    ${command}\n`);

    // A decision on the cut text main showed, on the input's digest, or with none, is not taken.
    const cut = `${command.slice(0, 1999)}…`;
    const decide = (body: Record<string, unknown>) =>
      w.client.request("POST", `/v1/permission-requests/${request!.id}/allow`, body);
    for (const shownDigest of [sha256(cut), request!.inputDigest]) {
      const refused = await refusal(decide({ scope: "once", shownDigest }));
      expect(refused).toMatchObject({ status: 409, code: "digest_mismatch" });
      expect(refused.message).toContain(`permission request ${request!.id}`);
    }
    expect(await refusal(decide({ scope: "once" }))).toMatchObject({ status: 400 });
    expect(
      await w.client.request<PermissionRequest>("GET", `/v1/permission-requests/${request!.id}`),
    ).toMatchObject({ status: "pending" });
    expect(existsSync(join(session.workspace, "shown-head.txt"))).toBe(false);

    // The card shows it whole in a block that scrolls (not clipped), and its allow names what it shows.
    scope.browser = await openBrowser({ height: 1000 });
    const { page } = scope.browser;
    await signInPage(page, w);
    await openSessionPage(page, w, session.id);
    const mark = page.locator('.session-rules li[data-rule="Bash(python3:*)"] .rule-runs-code');
    await expect(mark.textContent()).resolves.toBe(" lets the agent run any code");
    const card = page.locator('.permission-card[data-status="pending"]');
    await card.waitFor({ timeout: 90_000 });
    const block = card.locator(".permission-input");
    await expect(block.textContent()).resolves.toBe(command);
    const box = await block.evaluate((element) => {
      const before = { scrollHeight: element.scrollHeight, clientHeight: element.clientHeight };
      element.scrollTop = element.scrollHeight;
      return { ...before, overflowY: getComputedStyle(element).overflowY, scrolledTo: element.scrollTop };
    });
    expect(box.scrollHeight).toBeGreaterThan(box.clientHeight);
    expect(["auto", "scroll"]).toContain(box.overflowY);
    expect(box.scrolledTo).toBeGreaterThan(0);
    // Scrolled to its end, the block shows the tail inside its own box.
    const tailInView = await block.evaluate((element, tail) => {
      const text = element.firstChild as Text;
      const range = document.createRange();
      range.setStart(text, text.length - tail.length);
      range.setEnd(text, text.length);
      const [inner, outer] = [range.getBoundingClientRect(), element.getBoundingClientRect()];
      return inner.height > 0 && inner.top >= outer.top && inner.bottom <= outer.bottom;
    }, "touch hidden-tail.txt");
    expect(tailInView).toBe(true);
    await expect(card.locator(".permission-size").textContent()).resolves.toBe(
      `${command.length.toLocaleString("en")} characters in 1 line: scroll the block to read all of it.`,
    );
    await saveScreenshot(card, "request-card-long");

    await card.getByRole("button", { name: "Allow once" }).click();
    expect((await w.waitForEnd(turn.id, 90_000)).phase).toBe("completed");
    expect(existsSync(join(session.workspace, "hidden-tail.txt"))).toBe(true);
    expect(await w.client.request<FlootSessionRules>("GET", `/v1/sessions/${session.id}/rules`)).toEqual({
      rules: [],
      runAnyCode: ["Bash(python3:*)"],
    });
  }, 400_000);
});
