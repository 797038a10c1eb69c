// Apps read like the packages: small modules, each with one responsibility its name says. None over
// 350 lines.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, test } from "vitest";
import { repoRoot } from "./helpers.js";

const maxLines = 350;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts)$/.test(name) ? [relative(repoRoot, path)] : [];
  });
}

const files = readdirSync(join(repoRoot, "apps")).flatMap((app) =>
  sourceFiles(join(repoRoot, "apps", app, "src")),
);
const linesOf = (file: string) => readFileSync(join(repoRoot, file), "utf8").trimEnd().split("\n").length;

describe("app source files", () => {
  test("there are some (the check is not vacuous)", () => {
    expect(files).toContain("apps/floot-daemon/src/daemon/http/api-server.ts");
    expect(files.length).toBeGreaterThan(50);
  });

  test.each(files)(`%s has at most ${maxLines} lines`, (file) => {
    expect(linesOf(file)).toBeLessThanOrEqual(maxLines);
  });
});
