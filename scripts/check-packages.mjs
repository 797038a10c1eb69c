#!/usr/bin/env node
// What `pnpm publish` would ship, checked on the real tarballs (run after `pnpm turbo run build`):
//   node scripts/check-packages.mjs [--no-install] [--compile] [--keep]
// 1. Every non-private workspace package (pnpm-workspace.yaml globs) is packed with `pnpm pack`, which
//    applies publishConfig and rewrites workspace:/catalog: specifiers. The packed package.json must
//    have none of those left and no @bridgeworks/source condition; the tarball may hold only
//    package.json, README, LICENSE, CHANGELOG and the built output its exports, bin and pi.extensions
//    point into (dist/, bundle/): no tests, fixtures, sources, .tsbuildinfo or configs, and no source
//    map whose sources are not shipped.
// 2. `publint --strict` and `attw --profile esm-only` run on each tarball. A package with nothing
//    importable (no exports/main: a bin-only app) skips attw, which would only say "no types".
// 3. Install smoke test: the tarballs of the apps (packages with bin or pi.extensions) and of the
//    workspace packages they depend on are `npm install`ed into an empty folder; every bin answers
//    --help, and --version with the manifest's version; `bee` posts to and lists a temp board,
//    `floot daemon` starts on a temp state dir and answers the CLI, and the pinned Pi (test-harness's) loads each Pi package with `pi -e` and lists
//    its models. better-sqlite3's addon comes from the workspace's own build as a local prebuild
//    (same version and Node ABI, else npm compiles it); --compile always builds it from source.
// Everything started is killed by pid and the temp dir removed (--keep leaves it).
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, posix } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const SOURCE_CONDITION = "@bridgeworks/source";
const DEPENDENCY_FIELDS = ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"];
const RUNTIME_DEPENDENCY_FIELDS = ["dependencies", "peerDependencies", "optionalDependencies"];
const BUILD_DIRS = ["dist", "bundle"];
const TOP_LEVEL_FILE = /^(package\.json|readme(\.md)?|licen[cs]e(\.md|\.txt)?|changelog\.md)$/i;
const FORBIDDEN = [
  [/(^|\/)(test|tests|__tests__|spec)\//, "a test directory"],
  [/\.(test|spec|e2e)\.[cm]?[jt]sx?$/, "a test file"],
  [/(^|\/)(__)?fixtures?(__)?\//, "a test fixture"],
  [/(^|\/)(bench|coverage|test-results|\.turbo|node_modules)\//, "a dev-only directory"],
  [/\.tsbuildinfo$/, "a .tsbuildinfo"],
  [
    /(^|\/)(tsconfig[^/]*\.json|(vitest|vite|tsdown|turbo)\.config\.[cm]?[jt]s|biome\.json)$/,
    "a config file",
  ],
  [/(^|\/)src\/.*\.[cm]?tsx?$/, "TypeScript source"],
];

// ---------------------------------------------------------------------------------------------
// Pure checks (packages/repo-checks tests them on the real manifests and on broken ones).

/** The `packages:` globs of pnpm-workspace.yaml (only `dir/*` and plain dirs, as this repo uses). */
export function workspaceGlobs(yamlText) {
  const globs = [];
  let inPackages = false;
  for (const line of yamlText.split("\n")) {
    if (/^packages:\s*$/.test(line)) inPackages = true;
    else if (inPackages && /^\s+-\s*/.test(line))
      globs.push(
        line
          .replace(/^\s+-\s*/, "")
          .replace(/["']/g, "")
          .trim(),
      );
    else if (inPackages && /^\S/.test(line)) inPackages = false;
  }
  return globs;
}

/** Every workspace package: `{ dir (relative, posix), manifest }`, sorted by dir. */
export function workspacePackages(rootDir) {
  const found = [];
  for (const glob of workspaceGlobs(readFileSync(join(rootDir, "pnpm-workspace.yaml"), "utf8"))) {
    const match = /^([^*]+)\/\*$/.exec(glob);
    if (!match && glob.includes("*")) throw new Error(`pnpm-workspace.yaml: unsupported glob ${glob}`);
    const dirs = match
      ? readdirSync(join(rootDir, match[1]), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => `${match[1]}/${entry.name}`)
      : [glob];
    for (const dir of dirs) {
      const file = join(rootDir, dir, "package.json");
      if (existsSync(file)) found.push({ dir, manifest: JSON.parse(readFileSync(file, "utf8")) });
    }
  }
  return found.sort((a, b) => a.dir.localeCompare(b.dir));
}

export const isPublic = (manifest) => manifest.private !== true;

/** Apps are what users install: a command (`bin`) or a Pi package (`pi.extensions`). */
export const isApp = (manifest) => manifest.bin !== undefined || manifest.pi?.extensions !== undefined;

/** `exports` as published: the source condition removed everywhere, everything else in order. */
export function withoutSourceCondition(exports) {
  if (typeof exports !== "object" || exports === null) return exports;
  return Object.fromEntries(
    Object.entries(exports)
      .filter(([key]) => key !== SOURCE_CONDITION)
      .map(([key, value]) => [key, withoutSourceCondition(value)]),
  );
}

/** Every file an exports map can resolve to (null entries block a subpath and name no file). */
export function exportTargets(exports) {
  if (typeof exports === "string") return [exports];
  if (typeof exports !== "object" || exports === null) return [];
  return Object.values(exports).flatMap(exportTargets);
}

function binTargets(manifest) {
  if (typeof manifest.bin === "string") return [manifest.bin];
  return Object.values(manifest.bin ?? {});
}

/** Files a published package promises: its publish-time exports, main/types, bins and Pi extensions. */
export function promisedFiles(manifest) {
  const exports = manifest.publishConfig?.exports ?? withoutSourceCondition(manifest.exports);
  return [
    ...exportTargets(exports),
    ...["main", "module", "types", "typings"].map((field) => manifest[field]).filter(Boolean),
    ...binTargets(manifest),
    ...(manifest.pi?.extensions ?? []),
  ].map((target) => posix.normalize(target));
}

function globToRegExp(glob) {
  const body = glob
    .replace(/^\.\//, "")
    .replace(/\/$/, "")
    .split("**")
    .map((part) => part.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*"))
    .join(".*");
  // A directory entry covers everything under it.
  return new RegExp(`^${body}(/.*)?$`);
}

/** Whether npm's `files` list (entries and `!` negations, in order) takes in `path`. */
export function filesCover(files, path) {
  let covered = false;
  for (const entry of files) {
    const negated = entry.startsWith("!");
    if (globToRegExp(negated ? entry.slice(1) : entry).test(path)) covered = !negated;
  }
  return covered;
}

/** Whether `condition` objects anywhere in `exports` list `types` first and `default` last. */
function conditionOrderProblems(exports, at = "exports") {
  if (typeof exports !== "object" || exports === null) return [];
  const keys = Object.keys(exports);
  const problems = [];
  const isConditions = keys.length > 0 && !keys[0].startsWith(".");
  if (isConditions && keys.includes("types") && keys[0] !== "types")
    problems.push(`${at}: "types" must be the first condition (has ${keys.join(", ")})`);
  if (isConditions && keys.includes("default") && keys.at(-1) !== "default")
    problems.push(`${at}: "default" must be the last condition (has ${keys.join(", ")})`);
  for (const [key, value] of Object.entries(exports))
    problems.push(...conditionOrderProblems(value, `${at}[${JSON.stringify(key)}]`));
  return problems;
}

/**
 * The manifest of a public package as committed: published files listed, repository.directory its
 * folder, publishConfig.exports its exports minus the source condition, every promised file in `files`.
 */
export function manifestProblems(manifest, dir) {
  const problems = [];
  for (const field of ["name", "version", "description", "license"])
    if (typeof manifest[field] !== "string" || manifest[field] === "") problems.push(`"${field}" is missing`);
  if (!Array.isArray(manifest.files) || manifest.files.length === 0)
    problems.push(`"files" must list what is published (else npm packs the whole folder)`);
  if (typeof manifest.repository?.url !== "string") problems.push(`"repository.url" is missing`);
  if (manifest.repository?.directory !== dir)
    problems.push(`"repository.directory" must be ${JSON.stringify(dir)} (provenance links to it)`);
  if (manifest.publishConfig?.access !== "public") problems.push(`"publishConfig.access" must be "public"`);
  if (manifest.type !== "module") problems.push(`"type" must be "module" (ESM-only packages)`);

  const publishExports = manifest.publishConfig?.exports;
  if (manifest.exports === undefined) {
    if (publishExports !== undefined) problems.push(`"publishConfig.exports" is set but "exports" is not`);
  } else if (JSON.stringify(manifest.exports).includes(SOURCE_CONDITION) || publishExports !== undefined) {
    const expected = withoutSourceCondition(manifest.exports);
    if (JSON.stringify(publishExports) !== JSON.stringify(expected))
      problems.push(
        `"publishConfig.exports" must be "exports" without the ${SOURCE_CONDITION} condition: ${JSON.stringify(expected)}`,
      );
  }
  if (JSON.stringify(publishExports ?? {}).includes(SOURCE_CONDITION))
    problems.push(`"publishConfig.exports" names the ${SOURCE_CONDITION} condition`);
  problems.push(...conditionOrderProblems(publishExports ?? withoutSourceCondition(manifest.exports)));

  if (Array.isArray(manifest.files))
    for (const target of promisedFiles(manifest))
      if (!filesCover(manifest.files, target)) problems.push(`${target} is promised but not in "files"`);
  return problems;
}

/** Across the workspace: apps are published, and nothing public depends on a private package at run time. */
export function workspaceProblems(packages) {
  const byName = new Map(packages.map((pkg) => [pkg.manifest.name, pkg]));
  const problems = [];
  for (const { dir, manifest } of packages) {
    if (dir.startsWith("apps/") && !isPublic(manifest))
      problems.push(`${manifest.name}: apps are published to npm, so it must not be "private"`);
    if (!isPublic(manifest)) continue;
    for (const field of RUNTIME_DEPENDENCY_FIELDS)
      for (const name of Object.keys(manifest[field] ?? {})) {
        const target = byName.get(name);
        if (target && !isPublic(target.manifest))
          problems.push(
            `${manifest.name}: ${field} names the private package ${name}, which is never published`,
          );
      }
  }
  return problems;
}

/** The package.json inside a tarball: specifiers rewritten, no source condition, publishConfig applied. */
export function packedManifestProblems(manifest) {
  const problems = [];
  for (const field of DEPENDENCY_FIELDS)
    for (const [name, spec] of Object.entries(manifest[field] ?? {}))
      if (/^(workspace|catalog):/.test(spec))
        problems.push(`package.json: ${field}.${name} is still "${spec}"`);
  if (JSON.stringify(manifest).includes(SOURCE_CONDITION))
    problems.push(`package.json: still names the ${SOURCE_CONDITION} condition`);
  if (manifest.publishConfig?.exports !== undefined)
    problems.push(`package.json: publishConfig.exports was not applied (pack with pnpm)`);
  if (manifest.private === true) problems.push(`package.json: "private": true`);
  return problems;
}

/** The tarball's file list (paths relative to `package/`): only what the package needs. */
export function packedFileProblems(manifest, files) {
  const problems = [];
  const shipped = new Set(files);
  const promised = promisedFiles(manifest);
  const allowedDirs = new Set([...BUILD_DIRS, ...promised.map((target) => target.split("/")[0])]);
  for (const file of files) {
    const forbidden = FORBIDDEN.find(([pattern]) => pattern.test(file));
    const promisedSource = promised.includes(file);
    if (forbidden && !promisedSource) problems.push(`${file} is ${forbidden[1]}; it must not be published`);
    else if (!file.includes("/") && !TOP_LEVEL_FILE.test(file) && !promisedSource)
      problems.push(`${file} is not part of the published package`);
    else if (file.includes("/") && !allowedDirs.has(file.split("/")[0]))
      problems.push(`${file} is outside the built output (${[...allowedDirs].join(", ")})`);
  }
  for (const target of promised)
    if (!shipped.has(target))
      problems.push(
        `${target} is promised by package.json but not in the tarball (was the workspace built?)`,
      );
  for (const [name, target] of Object.entries(typeof manifest.bin === "object" ? manifest.bin : {}))
    if (name.includes("/")) problems.push(`bin ${name}: a command name has no "/" (target ${target})`);
  return problems;
}

/** Warnings (not failures): what a reader of the npm page or a redistributor would miss. */
export function packedFileWarnings(manifest, files) {
  const warnings = [];
  if (!files.some((file) => /^readme(\.md)?$/i.test(file)))
    warnings.push("no README (the npm page is empty)");
  if (manifest.license && !files.some((file) => /^licen[cs]e/i.test(file)))
    warnings.push(`no LICENSE file for "${manifest.license}" (pnpm packs the workspace root's LICENSE)`);
  return warnings;
}

/** Source maps in an unpacked tarball whose sources are neither shipped nor embedded (one line for all). */
export function sourceMapProblems(packageDir, files) {
  const shipped = new Set(files);
  const unreadable = [];
  const dangling = [];
  for (const file of files.filter((name) => name.endsWith(".map"))) {
    let map;
    try {
      map = JSON.parse(readFileSync(join(packageDir, file), "utf8"));
    } catch {
      unreadable.push(`${file} is not a JSON source map`);
      continue;
    }
    const missing = (map.sources ?? []).filter(
      (source, index) =>
        !map.sourcesContent?.[index] &&
        !shipped.has(posix.normalize(posix.join(posix.dirname(file), map.sourceRoot ?? "", source))),
    );
    if (missing.length > 0) dangling.push(`${file} maps to ${missing.join(", ")}`);
  }
  if (dangling.length === 0) return unreadable;
  return [
    ...unreadable,
    `${dangling.length} source map(s) point at sources that are not published (${dangling[0]}): leave the maps out with "!dist/**/*.map" in "files", or publish the sources`,
  ];
}

// ---------------------------------------------------------------------------------------------
// Running it.

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const started = performance.now();
const children = new Set();
/** The temp dir a signal must remove too. */
let workDir;
const seconds = (since) => `${((performance.now() - since) / 1000).toFixed(1)}s`;

/** Runs a command; resolves with its status and output, never rejects (a spawn error is status 127). */
function run(command, args, { cwd = root, env = process.env, timeoutMs = 120_000, input } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    children.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdin.on("error", () => {});
    child.stdin.end(input);
    const timer = setTimeout(() => {
      stderr += `\n(timed out after ${timeoutMs / 1000}s; killed)`;
      killGroup(child);
    }, timeoutMs);
    const done = (status) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ status, stdout, stderr, output: stdout + stderr });
    };
    child.on("error", (error) => {
      stderr += String(error);
      done(127);
    });
    child.on("close", (status, signal) => done(status ?? (signal ? 128 : 1)));
  });
}

function killGroup(child, signal = "SIGKILL") {
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {}
  }
}

async function mapLimit(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await fn(items[index]);
      }
    }),
  );
  return results;
}

function listFiles(dir, prefix = "") {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    return entry.isDirectory() ? listFiles(dir, path) : [path];
  });
}

function tool(name) {
  const path = join(root, "packages/repo-checks/node_modules/.bin", name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run pnpm install`);
  return path;
}

function pnpmCommand() {
  if (process.env.PNPM) return process.env.PNPM;
  const local = join(root, ".tools/node_modules/.bin/pnpm");
  return existsSync(local) ? local : "pnpm";
}

const indent = (text) =>
  text
    .trim()
    .split("\n")
    .map((line) => `      ${line}`)
    .join("\n");

/** Pack, unpack and check one public package. Returns `{ name, tarball, problems, warnings }`. */
async function checkPackage({ dir, manifest }, work) {
  const t0 = performance.now();
  const name = manifest.name;
  const problems = manifestProblems(manifest, dir);
  const slug = name.replace(/^@/, "").replace("/", "-");
  const tgzDir = join(work, "tgz", slug);
  mkdirSync(tgzDir, { recursive: true });
  const packed = await run(pnpmCommand(), ["pack", "--pack-destination", tgzDir, "--json"], {
    cwd: join(root, dir),
  });
  if (packed.status !== 0)
    return { name, problems: [...problems, `pnpm pack failed:\n${indent(packed.output)}`] };
  const tarball = join(
    tgzDir,
    readdirSync(tgzDir).find((file) => file.endsWith(".tgz")),
  );
  const unpacked = join(work, "unpacked", slug);
  mkdirSync(unpacked, { recursive: true });
  const untar = await run("tar", ["xzf", tarball, "-C", unpacked]);
  if (untar.status !== 0) return { name, problems: [...problems, `tar failed: ${untar.output}`] };
  const packageDir = join(unpacked, "package");
  const packedManifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  const files = listFiles(packageDir).sort();
  problems.push(
    ...packedManifestProblems(packedManifest),
    ...packedFileProblems(packedManifest, files),
    ...sourceMapProblems(packageDir, files),
  );
  const warnings = packedFileWarnings(packedManifest, files);

  const publint = await run(tool("publint"), ["--strict", tarball]);
  if (publint.status !== 0) problems.push(`publint --strict failed:\n${indent(publint.output)}`);
  const importable = ["exports", "main", "module", "types", "typings"].some(
    (field) => field in packedManifest,
  );
  let attwNote = "attw skipped (bin-only: nothing importable)";
  if (importable) {
    const attw = await run(tool("attw"), ["--profile", "esm-only", "--no-color", tarball]);
    if (attw.status !== 0) problems.push(`attw --profile esm-only failed:\n${indent(attw.output)}`);
    attwNote = /does not contain types/.test(attw.output) ? "attw ok (untyped)" : "attw ok";
  }
  console.log(
    `  ${problems.length ? "FAIL" : "ok  "} ${name} (${files.length} files; publint ok; ${attwNote}) ${seconds(t0)}`,
  );
  return { name, dir, manifest: packedManifest, tarball, problems, warnings };
}

/**
 * A local prebuild of each native addon the workspace already compiled (same version, same Node), for
 * prebuild-install: `{ env, archives }`, the env naming each package's local-prebuilds dir.
 */
function localPrebuilds(work) {
  const env = {};
  const archives = [];
  const store = join(root, "node_modules/.pnpm");
  for (const entry of existsSync(store) ? readdirSync(store) : []) {
    const packageDir = join(store, entry, "node_modules", entry.replace(/@[^@]+$/, "").replace("+", "/"));
    const manifestFile = join(packageDir, "package.json");
    if (entry.startsWith("@types") || !existsSync(manifestFile)) continue;
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
    const release = join(packageDir, "build/Release");
    if (!/prebuild-install/.test(manifest.scripts?.install ?? "") || !existsSync(release)) continue;
    // A prebuild holds the one addon prebuild-install loads to verify it (better_sqlite3.node, not
    // better-sqlite3's test_extension.node).
    const all = readdirSync(release).filter((file) => file.endsWith(".node"));
    const main = `${manifest.name.replace(/^@.*\//, "").replace(/-/g, "_")}.node`;
    const addons = all.includes(main) ? [main] : all.length === 1 ? all : [];
    if (addons.length === 0) continue;
    const prebuilds = join(work, "prebuilds", entry);
    mkdirSync(prebuilds, { recursive: true });
    // prebuild-install's name: {name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz (glibc: no libc part).
    const base = manifest.name.replace(/^@.*\//, "");
    const file = `${base}-v${manifest.version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    archives.push({ cwd: packageDir, file: join(prebuilds, file), addons });
    env[`npm_config_${manifest.name.replace(/[^a-zA-Z0-9]/g, "_").replace(/^_/, "")}_local_prebuilds`] =
      prebuilds;
  }
  return { env, archives };
}

function nodeDir() {
  const candidate = dirname(dirname(process.execPath));
  return existsSync(join(candidate, "include/node/node.h")) ? candidate : undefined;
}

/** Waits for `pattern` on a long-running child's output. */
function waitForOutput(child, pattern, timeoutMs) {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(
      () => reject(new Error(`no ${pattern} within ${timeoutMs / 1000}s:\n${output}`)),
      timeoutMs,
    );
    const onData = (chunk) => {
      output += chunk;
      const match = pattern.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before ${pattern}:\n${output}`));
    });
  });
}

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  killGroup(child, "SIGTERM");
  const timer = setTimeout(() => killGroup(child, "SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
  children.delete(child);
}

/** Deeper smoke tests per command; every bin also gets `--help`. */
const commandChecks = {
  async bee({ bin, env, tmp }) {
    const boardEnv = { ...env, BEE_BOARD: join(tmp, "bee/board.db") };
    mkdirSync(join(tmp, "bee"), { recursive: true });
    const posted = await run(bin, ["post", "--to", "*", "packed smoke test"], { env: boardEnv });
    if (posted.status !== 0) return `bee post failed (${posted.status}):\n${indent(posted.output)}`;
    const listed = await run(bin, ["list", "--json"], { env: boardEnv });
    if (listed.status !== 0 || !listed.stdout.includes("packed smoke test"))
      return `bee list --json did not show the posted action (${listed.status}):\n${indent(listed.output)}`;
    const agents = await run(bin, ["agents", "--json"], { env: boardEnv });
    if (agents.status !== 0 || !Array.isArray(JSON.parse(agents.stdout || "null")))
      return `bee agents --json failed (${agents.status}):\n${indent(agents.output)}`;
  },
  async floot({ bin, env, tmp }) {
    const state = join(tmp, "floot-state");
    const daemon = spawn(bin, ["daemon", "--state", state], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    children.add(daemon);
    try {
      const [, url] = await waitForOutput(daemon, /listening on (http:\/\/\S+)/, 20_000);
      const sessions = await run(bin, ["session", "list", "--json", "--state", state], { env });
      if (sessions.status !== 0 || !Array.isArray(JSON.parse(sessions.stdout || "{}").sessions))
        return `floot session list --json failed (${sessions.status}):\n${indent(sessions.output)}`;
      const page = await fetch(url, { redirect: "manual" });
      if (page.status >= 500) return `floot daemon answered ${page.status} on ${url}`;
    } catch (error) {
      return `floot daemon: ${indent(error.message)}`;
    } finally {
      await stopChild(daemon);
    }
  },
};

/** Pi packages: what `pi -e <installed package> --list-models` must list that plain Pi does not. */
const piExpectations = {
  "@bridgeworks/pi-provider": { provider: "claude-code", models: ["sonnet", "opus", "haiku"] },
};

async function checkPiPackage(name, installedDir, tmp) {
  const pi = join(root, "packages/test-harness/node_modules/.bin/pi");
  if (!existsSync(pi))
    return `${pi} is missing (the pinned Pi comes with packages/test-harness): run pnpm install`;
  const home = join(tmp, `pi-home-${name.replace(/\W/g, "_")}`);
  mkdirSync(join(home, ".pi/agent"), { recursive: true });
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: tmp,
    LANG: "C.UTF-8",
    PI_CODING_AGENT_DIR: join(home, ".pi/agent"),
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_DATA_HOME: join(home, ".local/share"),
    XDG_STATE_HOME: join(home, ".local/state"),
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
  };
  const [plain, loaded] = await Promise.all([
    run(pi, ["--list-models"], { env, cwd: home, timeoutMs: 60_000 }),
    run(pi, ["-e", installedDir, "--list-models"], { env, cwd: home, timeoutMs: 60_000 }),
  ]);
  if (loaded.status !== 0)
    return `pi -e ${installedDir} --list-models failed (${loaded.status}):\n${indent(loaded.output)}`;
  const before = new Set(plain.output.split("\n"));
  const added = loaded.output.split("\n").filter((line) => line.trim() && !before.has(line));
  const expected = piExpectations[name];
  if (expected) {
    const missing = expected.models.filter(
      (model) => !new RegExp(`^${expected.provider}\\s+${model}\\b`, "m").test(loaded.output),
    );
    if (missing.length > 0 || new RegExp(`^${expected.provider}\\s`, "m").test(plain.output))
      return `pi -e did not add ${expected.provider} ${missing.join(", ")} (or Pi lists it without -e):\n${indent(loaded.output)}`;
  } else if (added.length === 0) return `pi -e ${installedDir} --list-models lists nothing plain Pi does not`;
}

async function installSmoke(results, work, { compile }) {
  const byName = new Map(results.map((result) => [result.name, result]));
  const apps = results.filter((result) => isApp(result.manifest));
  // The apps and, transitively, the workspace packages they depend on (not on the registry yet).
  const wanted = new Set();
  const visit = (name) => {
    if (wanted.has(name) || !byName.has(name)) return;
    wanted.add(name);
    for (const field of RUNTIME_DEPENDENCY_FIELDS)
      for (const dep of Object.keys(byName.get(name).manifest[field] ?? {})) visit(dep);
  };
  for (const app of apps) visit(app.name);
  const tarballs = [...wanted].map((name) => byName.get(name).tarball);

  const install = join(work, "install");
  const tmp = join(work, "tmp");
  mkdirSync(install, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(
    join(install, "package.json"),
    `${JSON.stringify({ name: "packed-smoke", private: true })}\n`,
  );
  const env = { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false" };
  const dir = nodeDir();
  if (dir) env.npm_config_nodedir = dir;
  if (!compile) {
    const { env: prebuildEnv, archives } = localPrebuilds(work);
    for (const { cwd, file, addons } of archives) {
      const made = await run("tar", ["czf", file, ...addons.map((addon) => `build/Release/${addon}`)], {
        cwd,
      });
      if (made.status !== 0) throw new Error(`tar ${file}: ${made.output}`);
    }
    Object.assign(env, prebuildEnv);
  }
  const t0 = performance.now();
  const npm = await run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", "--no-package-lock", ...tarballs],
    { cwd: install, env, timeoutMs: 600_000 },
  );
  console.log(
    `  npm install of ${tarballs.length} tarballs: ${npm.status === 0 ? "ok" : "FAIL"} ${seconds(t0)}`,
  );
  if (npm.status !== 0) return [`npm install of the packed tarballs failed:\n${indent(npm.output)}`];

  const problems = [];
  // The user's own board and daemon state stay out of reach.
  const runEnv = {
    ...process.env,
    HOME: tmp,
    XDG_STATE_HOME: join(tmp, "state"),
    XDG_CONFIG_HOME: join(tmp, "config"),
  };
  delete runEnv.FLOOT_STATE_DIR;
  delete runEnv.BEE_BOARD;
  for (const app of apps) {
    const installedDir = join(install, "node_modules", app.name);
    const bins =
      typeof app.manifest.bin === "string"
        ? { [app.name.split("/").pop()]: app.manifest.bin }
        : (app.manifest.bin ?? {});
    for (const command of Object.keys(bins)) {
      const t1 = performance.now();
      const bin = join(install, "node_modules/.bin", command);
      const help = await run(bin, ["--help"], { env: runEnv, cwd: tmp, timeoutMs: 30_000 });
      const version = await run(bin, ["--version"], { env: runEnv, cwd: tmp, timeoutMs: 30_000 });
      const problem =
        help.status !== 0 || !/usage/i.test(help.output)
          ? `${command} --help failed (${help.status}):\n${indent(help.output)}`
          : version.status !== 0 || version.stdout.trim() !== app.manifest.version
            ? `${command} --version does not print ${app.manifest.version} (${version.status}):\n${indent(version.output)}`
            : await commandChecks[command]?.({ bin, env: runEnv, tmp });
      if (problem) problems.push(`${app.name}: ${problem}`);
      console.log(`  ${problem ? "FAIL" : "ok  "} ${command} (installed from the tarball) ${seconds(t1)}`);
    }
    if (app.manifest.pi?.extensions) {
      const t1 = performance.now();
      const problem = await checkPiPackage(app.name, installedDir, tmp);
      if (problem) problems.push(`${app.name}: ${problem}`);
      console.log(`  ${problem ? "FAIL" : "ok  "} pi -e ${app.name} --list-models ${seconds(t1)}`);
    }
  }
  return problems;
}

async function main(args) {
  const unknown = args.filter((arg) => !["--no-install", "--compile", "--keep"].includes(arg));
  if (unknown.length > 0) {
    console.error(`check-packages: unknown argument ${unknown.join(" ")}`);
    return 2;
  }
  const packages = workspacePackages(root);
  const publics = packages.filter((pkg) => isPublic(pkg.manifest));
  const work = mkdtempSync(join(tmpdir(), "check-packages-"));
  workDir = args.includes("--keep") ? undefined : work;
  const failures = [];
  try {
    failures.push(...workspaceProblems(packages).map((problem) => `workspace: ${problem}`));
    console.log(
      `check-packages: packing ${publics.length} public packages (${publics.map((p) => p.dir).join(", ")})`,
    );
    const results = await mapLimit(publics, Math.max(2, availableParallelism()), (pkg) =>
      checkPackage(pkg, work),
    );
    for (const result of results) {
      for (const problem of result.problems) failures.push(`${result.name}: ${problem}`);
      for (const warning of result.warnings ?? []) console.log(`  warning: ${result.name}: ${warning}`);
    }
    if (!args.includes("--no-install")) {
      if (results.some((result) => !result.tarball))
        failures.push("install smoke test skipped: a package did not pack");
      else {
        console.log("check-packages: installing the packed apps into an empty folder");
        failures.push(...(await installSmoke(results, work, { compile: args.includes("--compile") })));
      }
    }
  } finally {
    for (const child of children) killGroup(child);
    if (args.includes("--keep")) console.log(`check-packages: kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    console.error(`\ncheck-packages: ${failures.length} problem(s):`);
    for (const failure of failures) console.error(`  - ${failure}`);
    console.error(`check-packages: FAILED in ${seconds(started)}`);
    return 1;
  }
  console.log(`check-packages: all ${publics.length} packages ok in ${seconds(started)}`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const signal of ["SIGINT", "SIGTERM"])
    process.on(signal, () => {
      for (const child of children) killGroup(child);
      if (workDir) rmSync(workDir, { recursive: true, force: true });
      process.exit(130);
    });
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      for (const child of children) killGroup(child);
      console.error(`check-packages: ${error.stack ?? error}`);
      process.exit(1);
    },
  );
}
