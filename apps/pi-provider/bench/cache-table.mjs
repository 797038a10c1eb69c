#!/usr/bin/env node
// Runs the prompt-cache scenarios (test/cache.e2e.test.ts: real pi on both lines, real Claude Code,
// the model double) and prints their table as Markdown: for each scenario, the model requests of the
// conversation and how many of them rebuilt the cached prompt prefix (model-double `cacheStability`).
// The test run's own output goes to stderr; the exit code is the test run's.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appDir } from "./pi-lines.mjs";

// `--report <file>` renders a report an earlier run wrote (PI_CACHE_REPORT=<file> on the e2e suite).
const given =
  process.argv.indexOf("--report") >= 0 ? process.argv[process.argv.indexOf("--report") + 1] : undefined;
const dir = mkdtempSync(join(tmpdir(), "pi-cache-table-"));
const report = given ?? join(dir, "cache.jsonl");
try {
  const repoRoot = join(appDir, "../..");
  const test = "apps/pi-provider/test/cache.e2e.test.ts";
  const run = given
    ? { status: existsSync(given) ? 0 : 2 }
    : spawnSync(join(repoRoot, "node_modules/.bin/vitest"), ["run", "--project", "pi-provider", test], {
        cwd: repoRoot,
        env: { ...process.env, PI_CACHE_REPORT: report },
        stdio: ["ignore", 2, 2],
      });
  if (given && !existsSync(given)) process.stderr.write(`cache-table: no report at ${given}\n`);
  const rows = existsSync(report)
    ? readFileSync(report, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
  const lines = [...new Set(rows.map((row) => row.pi))];
  const scenarios = [...new Set(rows.map((row) => row.scenario))];
  const cell = (row) => (row ? `${row.rebuilds} of ${row.requests}` : "not run");
  const reasons = (row) => (row ? (row.reasons?.length ? row.reasons.join(", ") : "none") : "not run");
  const table = [
    `| scenario | ${lines.map((line) => `${line}: rebuilds of requests`).join(" | ")} | rebuilds it may force | ${lines.map((line) => `${line}: receipts' reasons`).join(" | ")} |`,
    `| --- | ${lines.map(() => "---").join(" | ")} | --- | ${lines.map(() => "---").join(" | ")} |`,
    ...scenarios.map((scenario) => {
      const of = (line) => rows.find((row) => row.pi === line && row.scenario === scenario);
      const forced = rows.find((row) => row.scenario === scenario)?.forced ?? 0;
      return `| ${scenario} | ${lines.map((line) => cell(of(line))).join(" | ")} | ${forced} | ${lines.map((line) => reasons(of(line))).join(" | ")} |`;
    }),
  ];
  process.stdout.write(`${table.join("\n")}\n`);
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
