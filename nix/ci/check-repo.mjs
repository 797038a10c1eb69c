#!/usr/bin/env node
// The offline checks of the Nix packaging that are about files, not Nix evaluation (run by
// scripts/check-nix.sh; plain Node, no dependencies):
//
//   sandbox   nix/sandbox.json's unit tests can run in the Nix sandbox: library projects only
//             (an app's suite runs the real clients), no vitest globalSetup (they start
//             PostgreSQL, build bundles, fetch Node 24), no test importing test-harness, pg or
//             playwright-core or starting pnpm, turbo, tmux, PostgreSQL, Chromium or a real client.
//   references  every package the sandbox unit tests cover, and every workspace package those
//             depend on, references in its tsconfig.json each workspace dependency it has (a test
//             running `tsc -b <package>` in a fresh tree builds only what is referenced: TS2307).
//   systems   the systems the flake builds (nix/npm-tarballs.json platforms) are the ones
//             .github/workflows/nix.yml builds, and the README advertises no other.
//   cache     flake.nix nixConfig names the Cachix cache the workflow pushes to, with a
//             well-formed key for it, and the README shows the same substituter and key.
//
//   node nix/ci/check-repo.mjs <root> <nixConfig as JSON>
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const [root, nixConfigJson] = process.argv.slice(2);
if (!root || nixConfigJson === undefined) {
  console.error("usage: check-repo.mjs <root> <nixConfig as JSON>");
  process.exit(2);
}

const problems = [];
const read = (path) => readFileSync(join(root, path), "utf8");

function testFiles(dir, found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist" || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) testFiles(path, found);
    else if (/\.test\.[cm]?[jt]s$/.test(entry.name)) found.push(path);
  }
  return found;
}

/** The workspace's package directories: packages/* and apps/*. */
function workspaceDirs() {
  return ["packages", "apps"]
    .filter((parent) => existsSync(join(root, parent)))
    .flatMap((parent) =>
      readdirSync(join(root, parent)).map((name) => ({ dir: join(parent, name), parent })),
    );
}

function vitestProjects() {
  const projects = new Map();
  for (const { dir, parent } of workspaceDirs()) {
    const config = join(dir, "vitest.config.ts");
    if (!existsSync(join(root, config))) continue;
    const match = /bridgeworksProject\(\s*["']([^"']+)["']/.exec(read(config));
    if (match) projects.set(match[1], { dir, config, isApp: parent === "apps" });
  }
  return projects;
}

const externalImport = /from\s+["'](@bridgeworks\/test-harness|pg|playwright-core)(?:\/[^"']*)?["']/;
const externalProgram =
  /\b(?:spawn|spawnSync|execFile|execFileSync|exec|execSync)\(\s*["'`](pnpm|npm|npx|turbo|tmux|psql|pg_ctl|initdb|postgres|chromium|claude|codex|pi|git)\b/;

function checkSandbox() {
  const sandbox = JSON.parse(read("nix/sandbox.json"));
  const projects = vitestProjects();
  const exclude = new Set(sandbox.unitTests?.exclude ?? []);
  for (const path of exclude) {
    if (!existsSync(join(root, path)))
      problems.push(`nix/sandbox.json excludes ${path}, which does not exist`);
  }
  for (const name of sandbox.unitTests?.projects ?? []) {
    const project = projects.get(name);
    if (!project) {
      problems.push(`nix/sandbox.json runs vitest project ${name}, which no vitest.config.ts defines`);
      continue;
    }
    if (project.isApp) {
      problems.push(
        `nix/sandbox.json runs ${name}: an app's suite runs the real clients, PostgreSQL, tmux or Chromium (npm test runs it)`,
      );
    }
    if (/globalSetup/.test(read(project.config))) {
      problems.push(
        `nix/sandbox.json runs ${name}, whose ${project.config} has a globalSetup (it starts PostgreSQL, builds bundles or fetches Node 24)`,
      );
    }
    for (const file of testFiles(join(root, project.dir))) {
      const path = relative(root, file);
      if (exclude.has(path)) continue;
      const text = readFileSync(file, "utf8");
      const imported = externalImport.exec(text);
      if (imported)
        problems.push(`${path} (sandbox unit tests) imports ${imported[1]}: exclude it in nix/sandbox.json`);
      const started = externalProgram.exec(text);
      if (started)
        problems.push(`${path} (sandbox unit tests) starts ${started[1]}: exclude it in nix/sandbox.json`);
      if (/["'`][^"'`]*\bscripts\//.test(text))
        problems.push(`${path} (sandbox unit tests) uses scripts/, which is not in the Nix source`);
    }
  }
}

function workspacePackages() {
  const packages = new Map();
  for (const { dir } of workspaceDirs()) {
    const manifest = join(dir, "package.json");
    if (existsSync(join(root, manifest))) packages.set(JSON.parse(read(manifest)).name, dir);
  }
  return packages;
}

function checkReferences() {
  const sandbox = JSON.parse(read("nix/sandbox.json"));
  const projects = vitestProjects();
  const packages = workspacePackages();
  const queue = (sandbox.unitTests?.projects ?? []).flatMap((name) => projects.get(name)?.dir ?? []);
  const seen = new Set();
  while (queue.length > 0) {
    const dir = queue.shift();
    if (seen.has(dir)) continue;
    seen.add(dir);
    const tsconfigPath = join(dir, "tsconfig.json");
    if (!existsSync(join(root, tsconfigPath))) continue;
    const tsconfig = JSON.parse(read(tsconfigPath));
    const referenced = new Set(
      (tsconfig.references ?? []).map((reference) => relative(root, resolve(root, dir, reference.path))),
    );
    const dependencies = JSON.parse(read(join(dir, "package.json"))).dependencies ?? {};
    for (const [name, range] of Object.entries(dependencies)) {
      const dependency = packages.get(name);
      if (!String(range).startsWith("workspace:") || !dependency) continue;
      if (!existsSync(join(root, dependency, "tsconfig.json"))) continue;
      queue.push(dependency);
      if (!referenced.has(dependency)) {
        problems.push(
          `${tsconfigPath} does not reference ${dependency} (${name}, a workspace dependency): \`tsc -b ${dir}\` in a fresh tree does not build it first and fails TS2307, as in the sandbox unit-tests check (nix/sandbox.json)`,
        );
      }
    }
  }
}

const systemPattern = /\b(?:x86_64|aarch64|i686|armv6l|armv7l|riscv64|powerpc64le)-(?:linux|darwin)\b/g;
const sorted = (values) => [...new Set(values)].sort();

function checkSystems() {
  const flake = sorted(Object.keys(JSON.parse(read("nix/npm-tarballs.json")).platforms ?? {}));
  const workflow = sorted(
    [...read(".github/workflows/nix.yml").matchAll(/^\s*(?:-\s+)?system:\s*([\w-]+)\s*$/gm)].map((m) => m[1]),
  );
  const readme = sorted(read("README.md").match(systemPattern) ?? []);
  if (flake.join() !== workflow.join()) {
    problems.push(
      `the flake builds ${flake.join(", ")}, .github/workflows/nix.yml builds ${workflow.join(", ") || "nothing"}: every system the flake offers must be built and cached`,
    );
  }
  for (const system of readme) {
    if (!workflow.includes(system))
      problems.push(`README.md advertises ${system}, which .github/workflows/nix.yml never builds`);
  }
  for (const system of flake) {
    if (!readme.includes(system)) problems.push(`README.md does not say the flake builds ${system}`);
  }
}

function checkCache() {
  const workflow = read(".github/workflows/nix.yml");
  const names = sorted(
    [
      ...workflow.matchAll(
        /uses:\s*cachix\/cachix-action@\S+\s*\n\s*with:\s*\n(?:[ \t]+[\w-]+:.*\n)*?[ \t]+name:\s*([\w-]+)/g,
      ),
    ].map((m) => m[1]),
  );
  if (names.length !== 1) {
    problems.push(
      `.github/workflows/nix.yml: expected one Cachix cache name in its cachix-action steps, found ${names.join(", ") || "none"}`,
    );
    return;
  }
  const [cache] = names;
  let config;
  try {
    config = JSON.parse(nixConfigJson);
  } catch {
    config = null;
  }
  if (!config || typeof config !== "object") {
    problems.push(
      `flake.nix has no nixConfig: users get no binary cache (extra-substituters https://${cache}.cachix.org and its key)`,
    );
    return;
  }
  const substituters = [...(config["extra-substituters"] ?? []), ...(config.substituters ?? [])];
  const keys = [...(config["extra-trusted-public-keys"] ?? []), ...(config["trusted-public-keys"] ?? [])];
  const url = `https://${cache}.cachix.org`;
  if (!substituters.includes(url)) {
    problems.push(
      `flake.nix nixConfig extra-substituters does not include ${url}, the cache .github/workflows/nix.yml pushes to`,
    );
  }
  const key = keys.find((k) => k.startsWith(`${cache}.cachix.org-1:`));
  if (!key) {
    problems.push(
      `flake.nix nixConfig extra-trusted-public-keys has no key for ${cache}.cachix.org (${cache}.cachix.org-1:<base64>)`,
    );
  } else if (
    Buffer.from(key.split(":")[1] ?? "", "base64").length !== 32 ||
    !/^[A-Za-z0-9+/]{43}=$/.test(key.split(":")[1])
  ) {
    problems.push(`flake.nix nixConfig key ${key} is not an ed25519 public key (32 bytes, base64)`);
  }
  const readme = read("README.md");
  if (!readme.includes(url)) problems.push(`README.md does not show the substituter ${url}`);
  if (key && !readme.includes(key))
    problems.push(`README.md does not show the key flake.nix trusts (${key})`);
}

checkSandbox();
checkReferences();
checkSystems();
checkCache();
if (problems.length > 0) {
  console.error(problems.map((p) => `check-nix: ${p}`).join("\n"));
  process.exit(1);
}
