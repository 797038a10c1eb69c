// README code examples are type-checked: every ```ts block names a region of a *.examples.ts file its
// package's typecheck covers, and holds exactly that region (scripts/readme-examples.mjs).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { readmeExampleProblems, regionOf, typescriptBlocks } from "../../../scripts/readme-examples.mjs";
import { repoRoot } from "./helpers.js";

describe("the repository's READMEs", () => {
  test("every TypeScript block is a type-checked example region, unchanged", () => {
    expect(readmeExampleProblems(repoRoot)).toEqual([]);
  });

  test("there are such blocks (the check is not vacuous)", () => {
    const readme = readFileSync(join(repoRoot, "packages/cli/README.md"), "utf8");
    expect(typescriptBlocks(readme).map((block) => block.source?.file)).toContain(
      "examples/bee-like.examples.ts",
    );
  });
});

describe("scripts/readme-examples.mjs on a made-up package", () => {
  let root: string;
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function world(readme: string, examples: string, include = ["../src", ".", "../examples"]) {
    root = mkdtempSync(join(tmpdir(), "readme-examples-"));
    execFileSync("git", ["init", "-q"], { cwd: root });
    mkdirSync(join(root, "pkg/examples"), { recursive: true });
    mkdirSync(join(root, "pkg/test"));
    writeFileSync(join(root, "pkg/package.json"), "{}");
    writeFileSync(join(root, "pkg/test/tsconfig.json"), JSON.stringify({ include }));
    writeFileSync(join(root, "pkg/examples/use.examples.ts"), examples);
    writeFileSync(join(root, "pkg/README.md"), readme);
  }

  const examples = "declare const x: number;\n//#region use\nconst y = x + 1;\n//#endregion use\n";

  test("a matching block passes", () => {
    world('# pkg\n\n```ts source="examples/use.examples.ts#use"\nconst y = x + 1;\n```\n', examples);
    expect(readmeExampleProblems(root)).toEqual([]);
  });

  test.each([
    ["```ts\nconst y = x + 1;\n```\n", 'needs source="<examples file>#<region>"'],
    [
      '```ts source="examples/use.examples.ts#use"\nconst y = x + 2;\n```\n',
      "differs from examples/use.examples.ts#use",
    ],
    ['```ts source="examples/use.examples.ts#other"\nconst y = x + 1;\n```\n', "has no region other"],
    ['```ts source="examples/nope.ts#use"\nconst y = x + 1;\n```\n', "is not an existing *.examples.ts file"],
  ])("%j is refused: %s", (block, problem) => {
    world(`# pkg\n\n${block}`, examples);
    const problems = readmeExampleProblems(root);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^pkg\/README\.md:3: /);
    expect(problems[0]).toContain(problem);
  });

  test("a block of a docs page (docs/*.md, where an app's reference lives) is checked as a README's is", () => {
    world("# pkg\n", examples);
    mkdirSync(join(root, "pkg/docs"));
    writeFileSync(
      join(root, "pkg/docs/api.md"),
      '# API\n\n```ts source="../examples/use.examples.ts#use"\nconst y = x + 2;\n```\n',
    );
    expect(readmeExampleProblems(root)).toEqual([
      "pkg/docs/api.md:3: differs from ../examples/use.examples.ts#use (run node scripts/readme-examples.mjs --write)",
    ]);
  });

  test("an examples file the package's typecheck does not include is refused", () => {
    world('```ts source="examples/use.examples.ts#use"\nconst y = x + 1;\n```\n', examples, ["../src", "."]);
    expect(readmeExampleProblems(root)[0]).toContain("is not included by its package's test/tsconfig.json");
  });

  test("--write copies the region into a stale block", () => {
    world('# pkg\n\n```ts source="examples/use.examples.ts#use"\nold\ntext\n```\n\nafter\n', examples);
    expect(readmeExampleProblems(root, { write: true })).toEqual([]);
    expect(readFileSync(join(root, "pkg/README.md"), "utf8")).toBe(
      '# pkg\n\n```ts source="examples/use.examples.ts#use"\nconst y = x + 1;\n```\n\nafter\n',
    );
  });

  test("regionOf drops surrounding blank lines and common indentation", () => {
    expect(regionOf("//#region a\n\n  if (x) {\n    y();\n  }\n\n//#endregion a\n", "a")).toBe(
      "if (x) {\n  y();\n}",
    );
    expect(regionOf("nothing here", "a")).toBeUndefined();
  });
});
