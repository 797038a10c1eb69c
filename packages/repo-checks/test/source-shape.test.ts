// Sources stay easy to change as they grow (issue 35): under `packages/*/src` and `apps/*/src`, no file
// over 500 lines, no class with more than 15 public methods, and no import cycle between the modules
// of one package or app.
//
// The rules as checked:
// - Lines: a file's lines, trailing blank lines left out.
// - Public methods: a class's methods and accessors (a getter and its setter are one name), static ones
//   too, and fields whose value is a function; not the constructor, nor a member that is `private`,
//   `protected` or `#`-named. Fields holding data are not methods. Every class counts: exported or not,
//   named or not. Past 15, the class does several things: split it by what it does.
// - Import cycles: within one package's or app's `src`, every static `import`/`export … from` of a
//   relative module counts, type-only ones too (a cycle of types knots the modules for a reader as much
//   as one of values); `import()` loads its module when called, after every module was evaluated, and is
//   left out. A cycle is one strongly connected part of that graph, named by one path through it.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { repoRoot } from "./helpers.js";
import { blankOut, classesOf, cyclesOf, relativeImportsOf, sourceFilesUnder } from "./source-shape.js";

const maxLines = 500;
const maxPublicMethods = 15;

/** Files known to be over `maxLines`, each with the issue that splits it. */
const longFileExceptions: Readonly<Record<string, string>> = {};

/** Every package and app: its name (`packages/board`) and its source files. */
const units = ["packages", "apps"].flatMap((group) =>
  readdirSync(join(repoRoot, group)).map((name) => {
    const unit = `${group}/${name}`;
    return { unit, files: sourceFilesUnder(repoRoot, join(repoRoot, unit, "src")) };
  }),
);
const files = units.flatMap(({ files }) => files);
const textOf = (file: string) => readFileSync(join(repoRoot, file), "utf8");
const linesOf = (text: string) => text.trimEnd().split("\n").length;

describe("the shape checks themselves", () => {
  test("they read every package and app (the checks are not vacuous)", () => {
    expect(files).toContain("packages/turn-journal/src/journal.ts");
    expect(files).toContain("apps/floot-daemon/src/daemon/daemon.ts");
    expect(units.filter(({ files }) => files.length > 0).length).toBeGreaterThanOrEqual(12);
  });

  test("comments, strings, template literals and regular expressions are blanked; lines stay", () => {
    const source = [
      // A template literal with a `${…}` holding another one (the `$` apart: this is a plain string).
      "const a = `x $" + "{b + `{`} }`; // class Not {",
      'const c = "}{" + /[/"]{/.source; /* class Neither { */',
      "class Real {}",
    ].join("\n");
    const code = blankOut(source, { strings: true });
    expect(code.split("\n")).toHaveLength(3);
    expect(code).not.toMatch(/Not|Neither/);
    expect(code.replace(/[^{}]/g, "")).toBe("{}{}");
    expect(classesOf(source).map((each) => each.name)).toEqual(["Real"]);
  });

  test("a class's public methods: methods, accessors once, statics and function fields; not the rest", () => {
    const source = `
      export class Counted<T extends { id: string }> extends Base<{ a: 1 }> implements Shape {
        readonly data = new Map<string, T>();
        static count = 0;
        #hidden() {}
        private secret(): void {}
        protected inherited(): void {}
        constructor(private readonly injected: string) { super(); }
        plain(): { a: number; b: string } { return { a: 1, b: "}" }; }
        async later(): Promise<void> {}
        generic<U>(value: U): U { return value; }
        get size(): number { return 1; }
        set size(value: number) {}
        static create(): Counted<{ id: string }> { return new Counted(""); }
        handler = (event: { type: string }) => { void event; };
        overloaded(a: string): void;
        overloaded(a: number): void;
        overloaded(a: unknown): void {}
        get(): number { return 0; }
      }`;
    expect(classesOf(source)).toEqual([
      {
        name: "Counted",
        line: 2,
        publicMethods: ["create", "generic", "get", "handler", "later", "overloaded", "plain", "size"],
      },
    ]);
  });

  test("an import cycle is found and named by a path; a chain is not; import() and commented imports are not read", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts", "d.ts"]],
      ["d.ts", []],
      ["e.ts", ["e.ts"]],
    ]);
    expect(cyclesOf(graph)).toEqual([
      ["a.ts", "b.ts", "c.ts", "a.ts"],
      ["e.ts", "e.ts"],
    ]);
    expect(
      cyclesOf(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", []],
        ]),
      ),
    ).toEqual([]);
    const file = "packages/backend-adapters/src/cli-process.ts";
    const imports = relativeImportsOf(
      repoRoot,
      file,
      [
        'import type { A } from "./backend-adapter.js";',
        'export { b } from "./confinement.js";',
        'import "./toml.js";',
        'const lazy = () => import("./run-turn.js");',
        '// import { c } from "./executable.js";',
        'import { z } from "zod";',
      ].join("\n"),
    );
    expect(imports).toEqual([
      "packages/backend-adapters/src/backend-adapter.ts",
      "packages/backend-adapters/src/confinement.ts",
      "packages/backend-adapters/src/toml.ts",
    ]);
  });
});

describe(`source files: at most ${maxLines} lines`, () => {
  test.each(files)("%s", (file) => {
    const lines = linesOf(textOf(file));
    if (file in longFileExceptions) return;
    expect(lines, `${file} has ${lines} lines: split it by mechanism`).toBeLessThanOrEqual(maxLines);
  });

  test.each(Object.entries(longFileExceptions))("the exception for %s (%s) is still needed", (file) => {
    expect(files, `${file} is gone: remove its exception`).toContain(file);
    expect(
      linesOf(textOf(file)),
      `${file} is no longer over ${maxLines} lines: remove its exception`,
    ).toBeGreaterThan(maxLines);
  });
});

describe(`classes: at most ${maxPublicMethods} public methods`, () => {
  test.each(files)("%s", (file) => {
    for (const shape of classesOf(textOf(file))) {
      expect(
        shape.publicMethods.length,
        `${file}:${shape.line} class ${shape.name} has ${shape.publicMethods.length} public methods (${shape.publicMethods.join(", ")}): split it by area`,
      ).toBeLessThanOrEqual(maxPublicMethods);
    }
  });
});

describe("modules: no import cycle within a package or app", () => {
  test.each(units.filter(({ files }) => files.length > 0).map(({ unit, files }) => [unit, files] as const))(
    "%s",
    (_unit, unitFiles) => {
      const graph = new Map(
        unitFiles.map((file) => [
          file,
          relativeImportsOf(repoRoot, file, textOf(file)).filter((target) => unitFiles.includes(target)),
        ]),
      );
      expect(cyclesOf(graph).map((cycle) => cycle.join(" -> "))).toEqual([]);
    },
  );
});
