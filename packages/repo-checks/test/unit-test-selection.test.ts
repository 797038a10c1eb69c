// The Nix unit-tests check runs nix/build-steps.sh's bridgeworks_unit_tests: the vitest projects
// nix/sandbox.json names, minus the files it excludes. Here that very function runs, with the
// workspace's vitest, narrowed by file filters to an excluded file and a file beside it in the same
// project: the one beside it runs, the excluded one does not.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readJson, repoRoot } from "./helpers.js";

const sandbox = readJson("nix/sandbox.json") as { unitTests: { projects: string[]; exclude: string[] } };
const dir = mkdtempSync(join(tmpdir(), "unit-test-selection-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Report {
  numTotalTests: number;
  testResults: { name: string; status: string }[];
}

/** bridgeworks_unit_tests with vitest's file filters; the files that ran, from vitest's JSON report. */
function unitTests(filters: string[]): string[] {
  const output = join(dir, `report-${filters.length}.json`);
  const result = spawnSync(
    "bash",
    [
      "-c",
      'set -euo pipefail; source nix/build-steps.sh; bridgeworks_unit_tests "$@"',
      "_",
      ...filters,
      "--reporter=json",
      `--outputFile=${output}`,
    ],
    {
      cwd: repoRoot,
      encoding: "utf8",
      env: {
        ...process.env,
        bridgeworksNix: join(repoRoot, "nix"),
        PATH: `${join(repoRoot, "node_modules/.bin")}:${process.env.PATH}`,
      },
      timeout: 240_000,
      killSignal: "SIGKILL",
    },
  );
  if (result.status !== 0) throw new Error(`bridgeworks_unit_tests failed: ${result.stdout}${result.stderr}`);
  const report = JSON.parse(readFileSync(output, "utf8")) as Report;
  return report.testResults.map((file) => file.name.slice(repoRoot.length + 1)).sort();
}

describe("the Nix unit-tests check's selection (nix/build-steps.sh, nix/sandbox.json)", {
  timeout: 300_000,
}, () => {
  it("excludes at least one file, of a project it runs", () => {
    expect(sandbox.unitTests.exclude).toContain("packages/turn-journal/test/torn-write.test.ts");
    expect(sandbox.unitTests.projects).toContain("turn-journal");
  });

  it("does not run an excluded file, and runs the file beside it", () => {
    const ran = unitTests(["test/torn-write.test.ts", "test/sqlite.test.ts"]);
    expect(ran).toEqual(["packages/turn-journal/test/sqlite.test.ts"]);
  });
});
