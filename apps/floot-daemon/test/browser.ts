import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import { afterEach, expect } from "vitest";
import { appDir, bundlePath, type FlootWorld } from "./daemon-harness.js";

export const chromiumPath = "/usr/bin/chromium";
export const screenshotDir = join(appDir, "test-results", "web-ui");
/** Screenshots the README and docs/web-ui.md link: committed, rewritten by each UI test run. */
export const docsScreenshotDir = join(appDir, "docs", "screenshots");

const chromiumArgs = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  userDataDir: string;
  close(): Promise<void>;
}

/** Debian's Chromium with a fresh profile; `close()` ends it and checks no process of it is left. */
/** `mobile`: a phone (the viewport meta tag honoured, touch events), as Chromium's device emulation does. */
export async function openBrowser(
  options: { width?: number; height?: number; mobile?: boolean; timezoneId?: string; locale?: string } = {},
): Promise<TestBrowser> {
  const userDataDir = mkdtempSync(join(tmpdir(), "floot-ui-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    args: chromiumArgs,
    headless: true,
    viewport: { width: options.width ?? 1100, height: options.height ?? 820 },
    colorScheme: "light",
    ...(options.mobile && { isMobile: true, hasTouch: true }),
    ...(options.timezoneId !== undefined && { timezoneId: options.timezoneId }),
    ...(options.locale !== undefined && { locale: options.locale }),
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    userDataDir,
    async close() {
      await context.close();
      const left = processesMentioning(userDataDir);
      for (const pid of left) process.kill(pid, "SIGKILL");
      rmSync(userDataDir, { recursive: true, force: true });
      if (left.length > 0) throw new Error(`chromium processes outlived the browser: ${left.join(", ")}`);
    },
  };
}

/** Pids whose command line names `needle` (the profile dir is on every Chromium process's argv). */
export function processesMentioning(needle: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(needle)) found.push(Number(name));
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}

export async function screenshot(page: Page, name: string, fullPage = false): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const path = join(screenshotDir, `${name}.png`);
  await page.screenshot({ path, fullPage });
  return path;
}

/**
 * Saves `target` (a page, or one element of it) as `docs/screenshots/<name>.png`, which the docs link;
 * of a page, `from` and `to` (elements on screen) bound the part saved, the viewport's width.
 */
export async function saveScreenshot(
  target: Page | Locator,
  name: string,
  part?: { from: Locator; to: Locator },
): Promise<string> {
  mkdirSync(docsScreenshotDir, { recursive: true });
  const path = join(docsScreenshotDir, `${name}.png`);
  if (!("goto" in target)) {
    // Centred, so the page's sticky app bar covers none of it.
    await target.evaluate((element) => element.scrollIntoView({ block: "center" }));
    await target.screenshot({ path, animations: "disabled" });
  } else if (part === undefined) {
    await target.screenshot({ path, animations: "disabled" });
  } else {
    const top = (await part.from.boundingBox())!.y;
    const to = (await part.to.boundingBox())!;
    const width = target.viewportSize()!.width;
    const clip = { x: 0, y: top, width, height: to.y + to.height - top };
    await target.screenshot({ path, clip, animations: "disabled" });
  }
  return path;
}

/**
 * Every element that reaches past the viewport's sides, unless an ancestor clips or scrolls it (a code
 * block scrolls inside itself), and the document when anything makes it wider than the viewport.
 */
export function tooWide(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const clipped = (element: Element) => {
      for (let up = element.parentElement; up && up !== document.body; up = up.parentElement)
        if (getComputedStyle(up).overflowX !== "visible") return true;
      return false;
    };
    const found: string[] = [];
    for (const element of document.body.querySelectorAll("*")) {
      const box = element.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      if ((box.left < -0.5 || box.right > width + 0.5) && !clipped(element))
        found.push(`${element.tagName.toLowerCase()}.${element.className} ${box.left}..${box.right}`);
    }
    const scrollWidth = document.documentElement.scrollWidth;
    if (scrollWidth > width) found.push(`the document is ${scrollWidth} px wide, the viewport ${width}`);
    return found;
  });
}

/** The page's origin: the daemon's TCP port on 127.0.0.1. */
export function pageOrigin(w: FlootWorld): string {
  return `http://127.0.0.1:${w.daemon!.file.port}`;
}

/** A fresh browser signed in through a `floot open` link, on the sessions list. */
export async function openSignedIn(w: FlootWorld): Promise<TestBrowser> {
  const browser = await openBrowser();
  try {
    await signInPage(browser.page, w);
  } catch (error) {
    await browser.close();
    throw error;
  }
  return browser;
}

export async function openSessionPage(page: Page, w: FlootWorld, sessionId: string): Promise<void> {
  await page.goto(`${pageOrigin(w)}/#/s/${sessionId}`);
  await page.locator(".session-head h1 code").waitFor();
}

/** `floot open --no-browser --json`, as a user runs it: the one-time sign-in link. */
export async function signInLink(w: FlootWorld): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [bundlePath, "open", "--state", w.stateDir, "--no-browser", "--json"],
    { env: w.env.env },
  );
  return (JSON.parse(stdout) as { url: string }).url;
}

/** Signs `page` in with a fresh `floot open` link; resolves on the sessions page. */
export async function signInPage(page: Page, w: FlootWorld): Promise<void> {
  await page.goto(await signInLink(w));
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
}

/** Types a prompt into the session page's box and sends (or queues) it. */
export async function sendFromPage(page: Page, prompt: string): Promise<void> {
  await page.getByLabel("Prompt").fill(prompt);
  await page.getByRole("button", { name: /^(Send|Queue)$/ }).click();
}

/** A test's browser and world, ended after each test (the browser first); the journal must check clean. */
export interface BrowserTestScope {
  world?: FlootWorld;
  browser?: TestBrowser;
}

/** Registers the `afterEach` that ends the scope's browser and world; call it at a test file's top. */
export function browserTestScope(): BrowserTestScope {
  const scope: BrowserTestScope = {};
  afterEach(async () => {
    await scope.browser?.close();
    scope.browser = undefined;
    const problems = (await scope.world?.dispose()) ?? [];
    scope.world = undefined;
    expect(problems).toEqual([]);
  });
  return scope;
}
