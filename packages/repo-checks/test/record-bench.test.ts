// Benchmark history is generated: scripts/record-bench.mjs runs a bench, passes its output through and
// appends a dated entry of every figure of its JSON to the package's BENCHMARKS.md, keeping the rest
// of the file; a bench that fails or prints no JSON changes nothing. What it writes is what biome
// would format, so `biome check .` passes after `pnpm bench`.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import {
  addEntry,
  figuresOf,
  fileHeader,
  markdownTable,
  renderEntry,
  sectionHeading,
} from "../../../scripts/record-bench.mjs";
import { repoRoot } from "./helpers.js";

const script = join(repoRoot, "scripts/record-bench.mjs");

const run = {
  command: "node bench/demo.bench.mjs",
  startedAt: new Date("2026-12-06T23:36:00Z"),
  seconds: 29,
  machine: "Linux 6.1 x64, 2 × AMD EPYC, 23.5 GiB, Node v20.20.2",
  commit: "228c04a",
  load: { before: 3.04, after: 4.51 },
  json: {
    benchmark: "demo",
    restart: { p50Ms: 212.5, baseline: { emptyStateDirP50Ms: 208 } },
    results: [
      { pi: "pi 0.73.1", medianMs: 59, withinGoal: true },
      { pi: "pi 1.6.0", medianMs: 49, withinGoal: false },
    ],
    samples: [3, 1, 2],
    perRun: Array.from({ length: 20 }, (_, index) => index + 1),
    note: "a | b",
  },
};

describe("an entry", () => {
  test("every figure, named by its path; items by their label; long sample lists summarized", () => {
    expect(figuresOf(run.json)).toEqual([
      ["benchmark", "demo"],
      ["restart.p50Ms", "212.5"],
      ["restart.baseline.emptyStateDirP50Ms", "208"],
      ["results[pi 0.73.1].medianMs", "59"],
      ["results[pi 0.73.1].withinGoal", "true"],
      ["results[pi 1.6.0].medianMs", "49"],
      ["results[pi 1.6.0].withinGoal", "false"],
      ["samples", "[3, 1, 2]"],
      ["perRun", "20 values: min 1, median 11, max 20"],
      ["note", "a | b"],
    ]);
  });

  test("dated, with the command, the machine, the commit and the load, then the figures", () => {
    expect(renderEntry(run)).toBe(
      [
        "### 2026-12-06 23:36 UTC, 228c04a",
        "",
        "- command: `node bench/demo.bench.mjs`, 29 s",
        "- machine: Linux 6.1 x64, 2 × AMD EPYC, 23.5 GiB, Node v20.20.2",
        "- load average (1 minute): 3.04 before, 4.51 after",
        "",
        "| figure                              | value                               |",
        "| ----------------------------------- | ----------------------------------- |",
        "| benchmark                           | demo                                |",
        "| restart.p50Ms                       | 212.5                               |",
        "| restart.baseline.emptyStateDirP50Ms | 208                                 |",
        "| results[pi 0.73.1].medianMs         | 59                                  |",
        "| results[pi 0.73.1].withinGoal       | true                                |",
        "| results[pi 1.6.0].medianMs          | 49                                  |",
        "| results[pi 1.6.0].withinGoal        | false                               |",
        "| samples                             | [3, 1, 2]                           |",
        "| perRun                              | 20 values: min 1, median 11, max 20 |",
        "| note                                | a \\| b                              |",
        "",
      ].join("\n"),
    );
  });

  test("biome leaves a whole file of entries as it is", () => {
    const markdown = addEntry(
      addEntry(fileHeader("@bridgeworks/demo"), sectionHeading("bench/demo.bench.mjs"), renderEntry(run)),
      sectionHeading("bench/other.bench.mjs"),
      renderEntry({ ...run, json: { µs: 1, "wide × figure": "ünïcödé" } }),
    );
    const formatted = execFileSync(
      join(repoRoot, "node_modules/.bin/biome"),
      ["format", "--stdin-file-path=BENCHMARKS.md"],
      { cwd: repoRoot, input: markdown, encoding: "utf8" },
    );
    expect(formatted).toBe(markdown);
  });

  test("a table as biome pads one", () => {
    expect(markdownTable(["a", "b"], [["x", "1"]])).toBe("| a   | b   |\n| --- | --- |\n| x   | 1   |");
  });
});

describe("the file", () => {
  const handWritten = [
    "# Benchmarks: demo",
    "",
    "## Before this file was generated",
    "",
    "### 2026-12-01: by hand",
    "",
    "Kept word for word.",
    "",
  ].join("\n");

  test("a bench's first entry adds its section at the end; everything before is kept", () => {
    const next = addEntry(handWritten, "## node bench/a.mjs", "### one\n\nfirst\n");
    expect(next).toBe(`${handWritten}\n## node bench/a.mjs\n\n### one\n\nfirst\n`);
  });

  test("a later entry goes at the end of its bench's section, before the next section", () => {
    let markdown = addEntry(handWritten, "## node bench/a.mjs", "### a1\n\nx\n");
    markdown = addEntry(markdown, "## node bench/b.mjs", "### b1\n\ny\n");
    markdown = addEntry(markdown, "## node bench/a.mjs", "### a2\n\nz\n");
    expect(markdown).toBe(
      `${handWritten}\n## node bench/a.mjs\n\n### a1\n\nx\n\n### a2\n\nz\n\n## node bench/b.mjs\n\n### b1\n\ny\n`,
    );
  });

  test("a heading inside a code block is not a section", () => {
    const markdown = "# B\n\n```\n## node bench/a.mjs\n```\n";
    expect(addEntry(markdown, "## node bench/a.mjs", "### e\n")).toBe(
      `${markdown}\n## node bench/a.mjs\n\n### e\n`,
    );
  });
});

describe("node scripts/record-bench.mjs <bench>", () => {
  let dir = "";
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function benchPackage(benchSource: string): string {
    dir = mkdtempSync(join(tmpdir(), "record-bench-"));
    mkdirSync(join(dir, "bench"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "@bridgeworks/demo" }));
    writeFileSync(join(dir, "bench/demo.bench.mjs"), benchSource);
    return dir;
  }
  const record = (...args: string[]) =>
    spawnSync(process.execPath, [script, "bench/demo.bench.mjs", ...args], { cwd: dir, encoding: "utf8" });

  test("passes the bench's output and arguments through and appends its entry, run after run", () => {
    benchPackage(
      "process.stdout.write(JSON.stringify({ args: process.argv.slice(2), p50Ms: 4 }) + '\\n');\n",
    );
    const first = record("loadProfile");
    expect(first.status).toBe(0);
    expect(first.stdout).toBe('{"args":["loadProfile"],"p50Ms":4}\n');
    record();
    const file = readFileSync(join(dir, "BENCHMARKS.md"), "utf8");
    expect(file.startsWith(fileHeader("@bridgeworks/demo"))).toBe(true);
    expect(file.match(/^## node bench\/demo\.bench\.mjs$/gm)).toHaveLength(1);
    expect(file.match(/^### \d{4}-\d\d-\d\d \d\d:\d\d UTC, /gm)).toHaveLength(2);
    expect(file).toContain("- command: `node bench/demo.bench.mjs loadProfile`, ");
    expect(file).toMatch(/\| args\s+\| \[loadProfile\] \|/);
    expect(file).toMatch(/\| p50Ms\s+\| 4\s+\|/);
  });

  test.each([
    ["exits 1", "console.log(JSON.stringify({ p50Ms: 4 })); process.exit(1);\n", "exited 1"],
    ["prints no JSON", "console.log('p50 4 ms');\n", 'printed "p50 4 ms"… on stdout, not one JSON document'],
    ["prints nothing", "\n", "printed nothing"],
  ])("a bench that %s fails the run and changes nothing", (_, source, message) => {
    benchPackage(source);
    writeFileSync(join(dir, "BENCHMARKS.md"), "# Benchmarks: demo\n");
    const result = record();
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain("BENCHMARKS.md not changed");
    expect(readFileSync(join(dir, "BENCHMARKS.md"), "utf8")).toBe("# Benchmarks: demo\n");
  });
});
