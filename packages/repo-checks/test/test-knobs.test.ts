import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { testOnlyNames } from "../../test-harness/src/faults.js";
import { repoRoot } from "./helpers.js";

// Test knobs stay out of what ships: the tests inject faults through test-harness's preload, so no
// app bundle may name one (an env variable, a hold, a blocking sleep kept for them).

const apps = readdirSync(join(repoRoot, "apps")).filter((app) =>
  existsSync(join(repoRoot, "apps", app, "tsdown.config.ts")),
);
const outDirs: string[] = [];
afterAll(() => {
  for (const dir of outDirs) rmSync(dir, { recursive: true, force: true });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** `name: file` for every test-only name found in the files under `dir`. */
function testOnlyNamesIn(dir: string): string[] {
  return filesUnder(dir).flatMap((path) => {
    const text = readFileSync(path, "utf8");
    return testOnlyNames.filter((name) => text.includes(name)).map((name) => `${name}: ${path}`);
  });
}

describe("no test-only name in a production bundle", () => {
  test("the apps with bundles are found", () => {
    expect(apps).toEqual(expect.arrayContaining(["bee-bridge", "floot-daemon", "pi-provider"]));
  });

  test.each(apps)(
    "%s, built as it ships",
    (app) => {
      const appDir = join(repoRoot, "apps", app);
      const outDir = mkdtempSync(join(tmpdir(), `bundle-${app}-`));
      outDirs.push(outDir);
      execFileSync(
        process.execPath,
        [join(appDir, "node_modules/tsdown/dist/run.mjs"), "--out-dir", outDir, "--silent"],
        {
          cwd: appDir,
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      expect(filesUnder(outDir).length).toBeGreaterThan(0);
      expect(testOnlyNamesIn(outDir)).toEqual([]);
    },
    120_000,
  );

  test("a bundle that carries a knob is caught", () => {
    const dir = mkdtempSync(join(tmpdir(), "bundle-knob-"));
    outDirs.push(dir);
    writeFileSync(
      join(dir, "app.mjs"),
      "const hold = process.env.FLOOT_TEST_HOLD_AFTER_SPAWN_MS; sleepSync(hold);\n",
    );
    expect(testOnlyNamesIn(dir)).toEqual([
      `FLOOT_TEST_: ${join(dir, "app.mjs")}`,
      `sleepSync: ${join(dir, "app.mjs")}`,
    ]);
  });
});
