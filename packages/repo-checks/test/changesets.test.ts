// Apps bundle the workspace libraries (devDependencies, inlined by tsdown), and changesets never bumps a
// package for a devDependency: a changeset naming only a library would ship a new library and leave the
// app that carries it on its old version. `.changeset/config.json` keeps every public package in one
// `fixed` group (the libraries every app bundles overlap, protocol above all, and fixed groups cannot).
// Checked with changesets' own release planning, on a copy of the workspace's manifests.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import getReleasePlan from "@changesets/get-release-plan";
import { afterEach, describe, expect, test } from "vitest";
import { isApp, isPublic, workspacePackages } from "../../../scripts/check-packages.mjs";
import { readJson, repoRoot } from "./helpers.js";

type Manifest = {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
};

const packages = (workspacePackages(repoRoot) as { dir: string; manifest: Manifest }[]).filter(
  ({ manifest }) => isPublic(manifest),
);
const byName = new Map(packages.map((pkg) => [pkg.manifest.name, pkg]));

/** The workspace libraries an app ships inside its bundle: its workspace dependencies, transitively. */
function bundledBy(app: Manifest): Set<string> {
  const found = new Set<string>();
  const visit = (manifest: Manifest) => {
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })) {
      const library = byName.get(name);
      if (library === undefined || found.has(name)) continue;
      found.add(name);
      visit(library.manifest);
    }
  };
  visit(app);
  return found;
}

const apps = packages.filter(({ manifest }) => isApp(manifest));
const pairs = apps.flatMap(({ manifest: app }) =>
  [...bundledBy(app)].map((library) => [library, app.name] as const),
);

let work: string | undefined;
afterEach(() => {
  if (work) rmSync(work, { recursive: true, force: true });
  work = undefined;
});

/** The release plan of one changeset bumping `library` alone, on a copy of the manifests and `config`. */
async function planFor(library: string, config: unknown) {
  work = mkdtempSync(join(tmpdir(), "repo-checks-changesets-"));
  for (const file of ["package.json", "pnpm-workspace.yaml"]) cpSync(join(repoRoot, file), join(work, file));
  for (const { dir } of workspacePackages(repoRoot) as { dir: string }[]) {
    mkdirSync(join(work, dir), { recursive: true });
    cpSync(join(repoRoot, dir, "package.json"), join(work, dir, "package.json"));
  }
  mkdirSync(join(work, ".changeset"));
  writeFileSync(join(work, ".changeset", "config.json"), JSON.stringify(config));
  writeFileSync(
    join(work, ".changeset", "library-only.md"),
    `---\n"${library}": patch\n---\n\nA fix inside ${library} only.\n`,
  );
  return getReleasePlan(work);
}

const config = readJson(".changeset/config.json") as { fixed: string[][] };

describe(".changeset/config.json", () => {
  test("the apps bundle workspace libraries (so this check has something to check)", () => {
    expect(apps.map(({ manifest }) => manifest.name).sort()).toEqual([
      "@bridgeworks/bee-bridge",
      "@bridgeworks/floot-daemon",
      "@bridgeworks/pi-provider",
    ]);
    for (const { manifest } of apps) expect(bundledBy(manifest)).toContain("@bridgeworks/protocol");
  });

  test.each(pairs)("a changeset bumping only %s also bumps %s", async (library, app) => {
    const plan = await planFor(library, config);
    const release = plan.releases.find((each) => each.name === app);
    expect(release?.type, `${app} in ${JSON.stringify(plan.releases.map((each) => each.name))}`).toBe(
      "patch",
    );
    expect(release?.newVersion).not.toBe(release?.oldVersion);
  });

  test("without the fixed group, changesets leaves the app behind (what the config is for)", async () => {
    const plan = await planFor("@bridgeworks/protocol", { ...config, fixed: [] });
    const names = plan.releases.filter((each) => each.type !== "none").map((each) => each.name);
    expect(names).toContain("@bridgeworks/protocol");
    expect(names).not.toContain("@bridgeworks/bee-bridge");
  });

  test("every changeset of the repository parses (a markdown formatter once turned a frontmatter into a heading)", async () => {
    const files = readdirSync(join(repoRoot, ".changeset")).filter(
      (name) => name.endsWith(".md") && name !== "README.md",
    );
    const plan = await getReleasePlan(repoRoot);
    expect(plan.changesets.map((changeset) => `${changeset.id}.md`).sort()).toEqual(files.sort());
    for (const changeset of plan.changesets)
      expect(changeset.releases.length, changeset.id).toBeGreaterThan(0);
  });

  test("the fixed group names every public package and nothing private", () => {
    expect([...(config.fixed[0] ?? [])].sort()).toEqual(packages.map(({ manifest }) => manifest.name).sort());
    expect(config.fixed).toHaveLength(1);
  });
});
