import { expect, test } from "vitest";
import { browserTestScope, openBrowser, screenshot, signInPage } from "./browser.js";
import { FlootWorld } from "./daemon-harness.js";

// First contact in the web UI: before any turn fails, the new-session form says which backend CLI is
// missing (disabled, with how to install it) and which looks signed out, as GET /v1/backends finds them
// (the real claude linked by the isolated environment; codex pointed at a path that does not exist).

const scope = browserTestScope();

test("the new-session form disables a missing backend with its install hint and says when one looks signed out", async () => {
  const w = await FlootWorld.create("claude", { steps: [] });
  scope.world = w;
  // No key variable for the daemon, and no credentials file in the isolated HOME: claude looks signed out.
  await w.startDaemon({ FLOOT_CODEX_COMMAND: "/nonexistent/codex", ANTHROPIC_API_KEY: "" });
  scope.browser = await openBrowser();
  const { page } = scope.browser;
  await signInPage(page, w);

  const codex = page.locator('#new-backend option[value="codex"]');
  await page.locator('.backend-notes li[data-backend="codex"]').waitFor();
  await expect(codex.isDisabled()).resolves.toBe(true);
  await expect(codex.textContent()).resolves.toBe("Codex (not installed)");
  await expect(page.locator('#new-backend option[value="claude"]').isDisabled()).resolves.toBe(false);
  await expect(page.locator("#new-backend").inputValue()).resolves.toBe("claude");

  const missing = page.locator('.backend-notes li[data-backend="codex"]');
  await expect(missing.getAttribute("data-state")).resolves.toBe("missing");
  await expect(missing.textContent()).resolves.toContain("npm install -g @openai/codex");
  const claude = page.locator('.backend-notes li[data-backend="claude"]');
  await expect(claude.getAttribute("data-state")).resolves.toBe("signed-out");
  await expect(claude.textContent()).resolves.toMatch(
    /2\.1\.332.*looks signed out \(none of ANTHROPIC_API_KEY/,
  );
  await expect(page.getByRole("button", { name: "Create session" }).isDisabled()).resolves.toBe(false);
  await page.locator(".new-session").scrollIntoViewIfNeeded();
  await screenshot(page, "new-session-backends");
});
