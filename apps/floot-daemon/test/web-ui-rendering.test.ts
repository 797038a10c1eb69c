import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type ScriptInput, toolTurnScript } from "@bridgeworks/model-double";
import type { FlootSession } from "@bridgeworks/protocol";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, test } from "vitest";
import { openSessionPage, openSignedIn, pageOrigin, saveScreenshot, type TestBrowser } from "./browser.js";
import { FlootWorld } from "./daemon-harness.js";

// How the page renders what agents write: Markdown (sanitized, live while it streams) and file edits
// as diffs. Debian's Chromium against the built daemon and the real claude / codex on the model double.
// Screenshots the README and docs/web-ui.md show go to docs/screenshots/.

let world: FlootWorld | undefined;
let browser: TestBrowser | undefined;
let attacker: Server | undefined;

afterEach(async () => {
  await browser?.close();
  browser = undefined;
  await new Promise((resolve) => (attacker ? attacker.close(resolve) : resolve(undefined)));
  attacker = undefined;
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

async function setUp(backend: "claude" | "codex", script: ScriptInput, options = {}) {
  world = await FlootWorld.create(backend, script);
  await world.startDaemon();
  const session = await world.createSession(options);
  browser = await openSignedIn(world);
  await openSessionPage(browser.page, world, session.id);
  return { w: world, session, page: browser.page };
}

async function send(page: Page, prompt: string): Promise<void> {
  await page.getByLabel("Prompt").fill(prompt);
  await page.getByRole("button", { name: /^(Send|Queue)$/ }).click();
}

/** A loopback server standing in for an attacker's: it counts every request that reaches it. */
async function startAttacker(): Promise<{ origin: string; hits: string[] }> {
  const hits: string[] = [];
  attacker = createServer((request, response) => {
    hits.push(request.url ?? "");
    response.end("gotcha");
  });
  await new Promise<void>((resolve) => attacker!.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`, hits };
}

const code = [
  "export function greeting(name: string): string {",
  '  return "Hello, " + name + "!";',
  "}",
].join("\n");
const plan = [
  "## Plan",
  "",
  "The failing test was **`greeting()` returning the wrong name**. I changed it in *one* place:",
  "",
  "1. read `src/greeting.ts`",
  "2. fix the name",
  "3. run the tests",
  "",
  "```ts",
  code,
  "```",
  "",
  "See the [TypeScript handbook](https://www.typescriptlang.org/docs/) on template literals.",
].join("\n");

function hostile(origin: string): string {
  return [
    "Hostile bits, each of which must stay inert:",
    "",
    `<img src=x onerror="alert('img-onerror')">`,
    "",
    `<script>alert('script-tag')</script><script src="${origin}/script.js"></script>`,
    "",
    `Inline <img src="${origin}/inline.png"> and <a href="${origin}/a" onclick="alert('onclick')">a handler</a>`,
    `and <iframe src="${origin}/frame"></iframe> and <b onmouseover="alert('hover')">hover me</b>.`,
    "",
    `A [javascript link](javascript:alert('js-link')), a [spaced one]( javascript:alert('js-2') ),`,
    `a [data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==), a picture`,
    `![pixel](${origin}/pixel.png) and <${origin}/autolink>.`,
  ].join("\n");
}

describe("web UI rendering", () => {
  test("agent text renders as Markdown while it streams; HTML, scripts and javascript: links in it stay inert", async () => {
    const { origin, hits } = await startAttacker();
    const { w, page } = await setUp("claude", {
      steps: [
        {
          match: { lastUserTextIncludes: "[render]" },
          response: {
            events: [
              { type: "text", text: plan, chunks: 4, deltaDelayMs: 2_500 },
              { type: "text", text: hostile(origin) },
            ],
          },
        },
      ],
    });
    const dialogs: string[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    const requests: string[] = [];
    page.on("request", (request) => requests.push(request.url()));
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = seen;
      document.addEventListener("securitypolicyviolation", (event) =>
        seen.push(`${event.violatedDirective} ${event.blockedURI}`),
      );
    });
    await browser!.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: pageOrigin(w) });

    await send(page, "[render] what did you change?");
    // Live: the first delta is Markdown already (a heading, bold), before the rest of the message arrives.
    const streaming = page.locator(".assistant-text.streaming");
    await streaming.locator("strong").waitFor({ timeout: 60_000 });
    const partial = await streaming.evaluate((element) => ({
      streaming: element.classList.contains("streaming"),
      heading: element.querySelector("h2")?.textContent,
      strong: element.querySelector("strong")?.textContent,
      codeBlocks: element.querySelectorAll(".code-block").length,
    }));
    expect(partial).toEqual({
      streaming: true,
      heading: "Plan",
      strong: "greeting() returning the wrong name",
      codeBlocks: 0,
    });

    const turn = page.locator('.turn[data-phase="completed"]');
    await turn.waitFor({ timeout: 60_000 });
    const [message, hostileMessage] = await turn.locator(".assistant-text").all();
    expect(await message!.evaluate((element) => element.classList.contains("streaming"))).toBe(false);

    // Markdown: the fenced block is a code block with its language and a copy button that copies.
    const block = message!.locator(".code-block");
    await expect(block.locator("code").textContent()).resolves.toBe(`${code}\n`);
    await expect(block.locator(".code-language").textContent()).resolves.toBe("ts");
    await expect(message!.locator("ol > li").count()).resolves.toBe(3);
    const handbook = message!.getByRole("link", { name: "TypeScript handbook" });
    await expect(handbook.getAttribute("href")).resolves.toBe("https://www.typescriptlang.org/docs/");
    await expect(handbook.getAttribute("rel")).resolves.toBe("noopener noreferrer");
    await expect(handbook.getAttribute("target")).resolves.toBe("_blank");

    await saveScreenshot(message!, "markdown");
    await block.getByRole("button", { name: "Copy code" }).click();
    await block.getByText("Copied").waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(`${code}\n`);

    // Inert: what the agent wrote as HTML is shown as text; links keep only http(s) targets.
    const dom = await turn.evaluate((element) => ({
      scripts: element.querySelectorAll("script").length,
      embeds: element.querySelectorAll("img, iframe, object, embed, svg, math, form, input, style").length,
      handlers: [...element.querySelectorAll("*")].flatMap((node) =>
        [...node.attributes]
          .filter((attribute) => /^on/i.test(attribute.name))
          .map((attribute) => attribute.name),
      ),
      hrefs: [...element.querySelectorAll("[href], [src], [action], [formaction]")].map(
        (node) => node.getAttribute("href") ?? node.getAttribute("src") ?? "",
      ),
      links: [...element.querySelectorAll("a")].map((link) => ({
        text: link.textContent,
        href: link.getAttribute("href"),
        rel: link.getAttribute("rel"),
      })),
    }));
    expect(dom.scripts).toBe(0);
    expect(dom.embeds).toBe(0);
    expect(dom.handlers).toEqual([]);
    for (const href of dom.hrefs) expect(href).toMatch(/^https?:\/\//);
    expect(dom.links).toEqual(
      expect.arrayContaining([
        { text: "javascript link", href: null, rel: null },
        { text: "spaced one", href: null, rel: null },
        { text: "data link", href: null, rel: null },
      ]),
    );
    for (const link of dom.links.filter((each) => each.href !== null))
      expect(link.rel).toBe("noopener noreferrer");

    // Poke everything a handler could hang on; nothing runs, nothing is fetched.
    await hostileMessage!.getByText("javascript link").click();
    await hostileMessage!.getByText("data link").click();
    await hostileMessage!.getByText("hover me").last().hover();
    await page.waitForTimeout(500);
    expect(dialogs).toEqual([]);
    expect(requests.filter((url) => url.startsWith(origin))).toEqual([]);
    expect(hits).toEqual([]);
    // Nothing even tried: the page's CSP (the second line) had nothing to refuse.
    await expect(
      page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations),
    ).resolves.toEqual([]);
    expect(page.url()).toMatch(/#\/s\//);
    const text = await hostileMessage!.textContent();
    expect(text).toContain(`<img src=x onerror="alert('img-onerror')">`);
    expect(text).toContain("<script>alert('script-tag')</script>");
  });

  test("Claude Code's Edit and Write show as diffs; a long one starts collapsed with its line counts", async () => {
    const longFile = Array.from({ length: 60 }, (_, index) => `export const line${index} = ${index};`).join(
      "\n",
    );
    const { w, session, page } = await setUp(
      "claude",
      toolTurnScript(
        [
          { id: "toolu_read", name: "Read", input: { file_path: "src/greeting.ts" } },
          {
            id: "toolu_edit",
            name: "Edit",
            input: {
              file_path: "src/greeting.ts",
              old_string: '  return "Hello, " + name;',
              new_string: '  // Greet with a capital and a bang.\n  return "Hello, " + name + "!";',
            },
          },
          {
            id: "toolu_write",
            name: "Write",
            input: { file_path: "src/lines.ts", content: `${longFile}\n` },
          },
        ],
        "Changed greeting() and added src/lines.ts.",
      ),
      { allowedTools: ["Read", "Edit", "Write"] },
    );
    writeWorkspaceFile(
      session,
      "src/greeting.ts",
      'export function greeting(name: string): string {\n  return "Hello, " + name;\n}\n',
    );
    await send(page, "fix the greeting");
    await page.locator('.turn[data-phase="completed"]').waitFor({ timeout: 90_000 });
    expect((await w.turns(session.id)).at(-1)?.phase).toBe("completed");

    const edit = page.locator('[data-tool-id="toolu_edit"]');
    await expect(edit.getAttribute("open")).resolves.toBe("");
    await expect(edit.locator("summary .diff-stat").textContent()).resolves.toBe("+2 −1");
    await expect(edit.locator(".diff-path").textContent()).resolves.toBe("src/greeting.ts");
    const lines = await edit
      .locator(".diff-line")
      .evaluateAll((spans) =>
        spans.map((span) => [span.className.replace("diff-line diff-", ""), span.textContent]),
      );
    expect(lines).toEqual([
      ["remove", '-  return "Hello, " + name;'],
      ["add", "+  // Greet with a capital and a bang."],
      ["add", '+  return "Hello, " + name + "!";'],
    ]);
    await expect(edit.locator(".tool-input").count()).resolves.toBe(0);
    await edit.locator(".tool-output").waitFor();
    await saveScreenshot(edit, "diff-edit");

    const write = page.locator('[data-tool-id="toolu_write"]');
    await expect(write.getAttribute("open")).resolves.toBeNull();
    await expect(write.locator("summary .diff-stat").textContent()).resolves.toBe("+60 −0");
    await expect(write.locator(".diff-kind").textContent()).resolves.toBe("written");
    await write.locator("summary").click();
    await write.locator(".diff-line").last().scrollIntoViewIfNeeded();
    await expect(write.locator(".diff-add").count()).resolves.toBe(60);
    // A tool that edits nothing still shows its arguments.
    await expect(page.locator('[data-tool-id="toolu_read"] .tool-input').textContent()).resolves.toContain(
      "src/greeting.ts",
    );
  });

  test("a Codex patch shows as a diff, its text taken from the call the gate admitted", async () => {
    const patch = [
      "*** Begin Patch",
      "*** Update File: notes.txt",
      "@@",
      "-alpha",
      "+ALPHA",
      " beta",
      "*** Add File: fresh.txt",
      "+new line one",
      "+new line two",
      "*** End Patch",
    ].join("\n");
    const { w, session, page } = await setUp(
      "codex",
      toolTurnScript(
        [
          {
            id: "call_patch",
            nameFrom: { equals: "exec_command" },
            input: { cmd: `apply_patch <<'EOF'\n${patch}\nEOF` },
          },
        ],
        "Patched.",
      ),
    );
    writeWorkspaceFile(session, "notes.txt", "alpha\nbeta\n");
    await send(page, "patch the notes");
    await page.locator('.turn[data-phase="completed"]').waitFor({ timeout: 90_000 });
    const events = await w.events((await w.turns(session.id)).at(-1)!.id);
    expect(events.map((each) => each.event.type)).toEqual(
      expect.arrayContaining(["tool.admitted", "tool.started", "tool.completed"]),
    );

    const card = page.locator(".tool-edit");
    await expect(card.count()).resolves.toBe(1);
    await expect(card.locator(".tool-name").textContent()).resolves.toBe("file_change");
    await expect(card.locator("summary .diff-stat").textContent()).resolves.toBe("+3 −1");
    const files = await card.locator(".diff-file").evaluateAll((sections) =>
      sections.map((section) => ({
        path: section.getAttribute("data-diff-path"),
        kind: section.querySelector(".diff-kind")?.textContent,
        lines: [...section.querySelectorAll(".diff-line")].map((line) => line.textContent),
      })),
    );
    expect(files).toEqual([
      {
        path: join(session.workspace, "fresh.txt"),
        kind: "added",
        lines: ["+new line one", "+new line two"],
      },
      {
        path: join(session.workspace, "notes.txt"),
        kind: "updated",
        lines: ["@@", "-alpha", "+ALPHA", " beta"],
      },
    ]);
  });
});

function writeWorkspaceFile(session: FlootSession, path: string, content: string): void {
  const file = join(session.workspace, path);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, content);
}
