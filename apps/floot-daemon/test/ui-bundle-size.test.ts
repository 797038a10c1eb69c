import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { expect, test } from "vitest";
import { appDir } from "./daemon-harness.js";

// The web UI's script, as global-setup built it: a budget, so a dependency that stops tree-shaking (or a
// syntax highlighter pulled in whole) is noticed. docs/web-ui.md states the measured sizes.
const budget = { raw: 170_000, gzip: 56_000 };

test("the UI bundle stays within its budget", () => {
  const script = readFileSync(join(appDir, "bundle", "ui", "app.js"));
  const sizes = { raw: script.length, gzip: gzipSync(script, { level: 9 }).length };
  expect(sizes.raw).toBeLessThanOrEqual(budget.raw);
  expect(sizes.gzip).toBeLessThanOrEqual(budget.gzip);
  // The sanitizer and the parser are in it; a highlighter is not.
  const text = script.toString("utf8");
  expect(text).toContain("DOMPurify");
  expect(text).not.toMatch(/hljs|highlight\.js|prismjs/);
});
