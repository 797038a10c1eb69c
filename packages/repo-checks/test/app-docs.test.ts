// Each app's README is for the people who use it (under 200 lines); its reference lives in docs/
// pages it links, each of which exists and is linked, and no relative link anywhere in an app's
// Markdown, the root README or ARCHITECTURE.md is broken. Every workspace package has a README, and
// every bench `pnpm bench` runs goes through the one writer of BENCHMARKS.md.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { appDocsProblems, brokenLinks, headingAnchors, linkTargets, maxReadmeLines } from "./app-docs.js";
import { readJson, readText, repoRoot } from "./helpers.js";

const apps = readdirSync(join(repoRoot, "apps")).filter((name) =>
  existsSync(join(repoRoot, "apps", name, "package.json")),
);
const workspaces = ["packages", "apps"].flatMap((parent) =>
  readdirSync(join(repoRoot, parent))
    .filter((name) => existsSync(join(repoRoot, parent, name, "package.json")))
    .map((name) => `${parent}/${name}`),
);

describe("the apps' READMEs and docs pages", () => {
  test("there are apps with docs pages (the check is not vacuous)", () => {
    expect(apps).toEqual(expect.arrayContaining(["bee-bridge", "floot-daemon", "pi-provider"]));
    expect(existsSync(join(repoRoot, "apps/floot-daemon/docs/contract.md"))).toBe(true);
  });

  test.each(apps)(
    `apps/%s: README under ${maxReadmeLines} lines, every docs page linked and there, no broken link`,
    (app) => {
      expect(appDocsProblems(join(repoRoot, "apps", app), repoRoot)).toEqual([]);
    },
  );

  test.each(["README.md", "ARCHITECTURE.md"])("%s links only what exists", (file) => {
    expect(brokenLinks(join(repoRoot, file), repoRoot)).toEqual([]);
  });
});

describe("every workspace package", () => {
  test.each(workspaces)("%s has a README", (workspace) => {
    expect(existsSync(join(repoRoot, workspace, "README.md"))).toBe(true);
  });

  const benched = workspaces.flatMap((workspace) => {
    const bench = (readJson(`${workspace}/package.json`) as { scripts?: Record<string, string> }).scripts
      ?.bench;
    return bench === undefined ? [] : [{ workspace, bench }];
  });

  test("some have a bench (the check is not vacuous)", () => {
    expect(benched.map(({ workspace }) => workspace)).toContain("apps/floot-daemon");
  });

  test.each(benched)(
    "$workspace: its bench runs every bench script through scripts/record-bench.mjs, and its README links BENCHMARKS.md",
    ({ workspace, bench }) => {
      const scripts = [...bench.matchAll(/\bnode (\S+)/g)].map((match) => match[1]);
      expect(scripts.length).toBeGreaterThan(0);
      for (const script of scripts) expect(script).toBe("../../scripts/record-bench.mjs");
      expect(linkTargets(readText(`${workspace}/README.md`))).toContain("BENCHMARKS.md");
    },
  );
});

describe("the check on a made-up app", () => {
  let root = "";
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function app(files: Record<string, string>): string {
    root = mkdtempSync(join(tmpdir(), "app-docs-"));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, "app", path, ".."), { recursive: true });
      writeFileSync(join(root, "app", path), text);
    }
    return join(root, "app");
  }

  test("a short README linking each page that exists, by heading too: no problem", () => {
    const dir = app({
      "README.md": "# App\n\n[the contract](docs/contract.md), [its start](docs/contract.md#start-order)\n",
      "docs/contract.md": "# Contract\n\n## Start order\n\nBack to the [README](../README.md).\n",
    });
    expect(appDocsProblems(dir, root)).toEqual([]);
  });

  test("a README of 200 lines is too long", () => {
    const dir = app({ "README.md": `# App\n${"line\n".repeat(maxReadmeLines - 1)}` });
    expect(appDocsProblems(dir, root)).toEqual([
      "app/README.md has 200 lines; a README for users stays under 200",
    ]);
  });

  test("a linked page that is not there, a page not linked, a heading that is not there", () => {
    const dir = app({
      "README.md": "# App\n\n[gone](docs/gone.md) and [cli](docs/cli.md#no-such-heading)\n",
      "docs/cli.md": "# CLI\n\nSee the [threat model](threat-model.md).\n",
      "docs/orphan.md": "# Orphan\n",
    });
    expect(appDocsProblems(dir, root)).toEqual([
      "app/README.md does not link docs/orphan.md",
      "app/README.md: links docs/gone.md, which does not exist",
      "app/README.md: links docs/cli.md#no-such-heading, but app/docs/cli.md has no heading #no-such-heading",
      "app/docs/cli.md: links threat-model.md, which does not exist",
    ]);
  });

  test("links in code are not links; web links are not followed", () => {
    const dir = app({
      "README.md":
        "# App\n\n`[x](docs/x.md)` [site](https://example.com/docs/y.md)\n\n```\n[z](docs/z.md)\n```\n",
    });
    expect(appDocsProblems(dir, root)).toEqual([]);
  });
});

test("heading anchors as GitHub makes them", () => {
  expect([
    ...headingAnchors("# Tests, crash torture, bench\n## `floot open`\n## A.B\n## A.B\n```\n# not\n```\n"),
  ]).toEqual(["tests-crash-torture-bench", "floot-open", "ab", "ab-1"]);
});
