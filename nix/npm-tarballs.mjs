#!/usr/bin/env node
// nix/npm-tarballs.json from pnpm-lock.yaml: every npm tarball the Nix build installs, with the
// lockfile's own integrity hash, and per Nix system the ones that system fetches. Nix cannot read
// YAML, so this file carries what it needs; nothing in it is computed by Nix or by hand.
//
//   node nix/npm-tarballs.mjs            rewrite nix/npm-tarballs.json (after pnpm-lock.yaml changed)
//   node nix/npm-tarballs.mjs --check    exit 1 when nix/npm-tarballs.json is not what this would write
//   [--root DIR]                         the repository (default: this script's parent directory)
//
// What is listed: the closure of the workspace projects the Nix build installs (every project except
// nix/sandbox.json "installExclude", the same filter nix/build-steps.sh gives `pnpm install`),
// walked through the lockfile's snapshots; and the pnpm that wrote the lockfile
// (packageManagerDependencies), which the build runs. Per system, a package is listed when its
// os/cpu/libc fields admit that system (pnpm's own rule, with glibc on Linux), so a system fetches
// only its own native binaries.
//
// Plain Node with no dependencies: it parses the subset of YAML pnpm writes and refuses the rest.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";

export class LockfileError extends Error {}

const fail = (message) => {
  throw new LockfileError(message);
};

/** The Nix systems the flake builds (its one list), as pnpm names their platform. */
export const systems = {
  "x86_64-linux": { os: "linux", cpu: "x64", libc: "glibc" },
  "aarch64-linux": { os: "linux", cpu: "arm64", libc: "glibc" },
  "aarch64-darwin": { os: "darwin", cpu: "arm64", libc: null },
};

// ---------------------------------------------------------------------------------------------
// The YAML pnpm writes: block mappings and sequences, flow mappings and sequences of scalars,
// plain and quoted scalars, `---` between documents. Anything else is refused with its line.

function parseScalar(text, where) {
  const s = text.trim();
  if (s === "") return null;
  if (s.startsWith("'")) {
    if (!s.endsWith("'") || s.length < 2) fail(`${where}: unterminated '-quoted scalar`);
    return s.slice(1, -1).replaceAll("''", "'");
  }
  if (s.startsWith('"')) {
    try {
      return JSON.parse(s);
    } catch {
      fail(`${where}: "-quoted scalar pnpm would not write: ${s}`);
    }
  }
  if (/^[&*!|>%@`]/.test(s) || s.includes(" #")) fail(`${where}: YAML feature this parser refuses: ${s}`);
  if (s === "true") return true;
  if (s === "false") return false;
  return s;
}

/** Splits a flow collection's body at top-level commas. */
function splitFlow(body, where) {
  const parts = [];
  let depth = 0;
  let quote = null;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (c === "," && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  if (quote || depth !== 0) fail(`${where}: unbalanced flow collection`);
  const last = body.slice(start);
  if (last.trim() !== "") parts.push(last);
  return parts;
}

/** `key: rest` with the key possibly quoted; returns [key, rest] or null. */
function splitKey(text, where) {
  let key;
  let rest;
  if (text.startsWith("'")) {
    let i = 1;
    for (;;) {
      i = text.indexOf("'", i);
      if (i < 0) fail(`${where}: unterminated quoted key`);
      if (text[i + 1] === "'") i += 2;
      else break;
    }
    key = parseScalar(text.slice(0, i + 1), where);
    rest = text.slice(i + 1);
    if (!rest.startsWith(":")) return null;
    rest = rest.slice(1);
  } else {
    const colon = text.search(/:(?:\s|$)/);
    if (colon <= 0) return null;
    key = text.slice(0, colon);
    if (/^[\s'"{}[\],]/.test(key)) return null;
    rest = text.slice(colon + 1);
  }
  if (rest !== "" && !rest.startsWith(" ")) return null;
  return [key, rest.trim()];
}

function parseFlow(text, where) {
  const s = text.trim();
  if (s.startsWith("{")) {
    if (!s.endsWith("}")) fail(`${where}: unterminated flow mapping`);
    const out = {};
    for (const part of splitFlow(s.slice(1, -1), where)) {
      const entry = splitKey(part.trim(), where);
      if (!entry) fail(`${where}: flow mapping entry without a key: ${part.trim()}`);
      out[entry[0]] = parseFlow(entry[1], where);
    }
    return out;
  }
  if (s.startsWith("[")) {
    if (!s.endsWith("]")) fail(`${where}: unterminated flow sequence`);
    return splitFlow(s.slice(1, -1), where).map((part) => parseFlow(part, where));
  }
  return parseScalar(s, where);
}

/** Parses one document's lines (with their line numbers) into plain objects. */
function parseBlock(lines, start, indent, source) {
  const first = lines[start];
  if (first?.text.slice(first.indent).startsWith("- ")) {
    const list = [];
    let i = start;
    while (i < lines.length && lines[i].indent === indent) {
      const body = lines[i].text.slice(indent);
      if (!body.startsWith("- ")) fail(`${source}:${lines[i].line}: expected a sequence item`);
      list.push(parseFlow(body.slice(2), `${source}:${lines[i].line}`));
      i++;
    }
    return [list, i];
  }
  const map = {};
  let i = start;
  while (i < lines.length && lines[i].indent === indent) {
    const { text, line } = lines[i];
    const where = `${source}:${line}`;
    const entry = splitKey(text.slice(indent), where);
    if (!entry) fail(`${where}: expected "key: value": ${text.trim()}`);
    const [key, rest] = entry;
    if (Object.hasOwn(map, key)) fail(`${where}: duplicate key ${key}`);
    i++;
    if (rest !== "") {
      map[key] = parseFlow(rest, where);
    } else if (i < lines.length && lines[i].indent > indent) {
      const [value, next] = parseBlock(lines, i, lines[i].indent, source);
      map[key] = value;
      i = next;
    } else {
      map[key] = null;
    }
  }
  if (i < lines.length && lines[i].indent > indent) {
    fail(`${source}:${lines[i].line}: unexpected indentation`);
  }
  return [map, i];
}

/** pnpm-lock.yaml text -> its documents (pnpm 12 writes the package-manager document first). */
export function parseLockfile(text, source = "pnpm-lock.yaml") {
  const documents = [];
  let current = [];
  text.split("\n").forEach((raw, index) => {
    const line = index + 1;
    if (raw.includes("\t")) fail(`${source}:${line}: tab character`);
    if (raw.trim() === "") return;
    if (raw === "---") {
      if (current.length) documents.push(current);
      current = [];
      return;
    }
    if (raw.trimStart().startsWith("#")) fail(`${source}:${line}: comments are not written by pnpm`);
    current.push({ text: raw.trimEnd(), indent: raw.length - raw.trimStart().length, line });
  });
  if (current.length) documents.push(current);
  return documents.map((lines) => {
    if (lines[0].indent !== 0) fail(`${source}:${lines[0].line}: a document starts indented`);
    const [value, end] = parseBlock(lines, 0, 0, source);
    if (end !== lines.length) fail(`${source}:${lines[end].line}: unexpected indentation`);
    return value;
  });
}

// ---------------------------------------------------------------------------------------------
// The lockfile's graph.

/** "name@version(peer@x)" -> "name@version" (the `packages:` key). */
export const packageKey = (snapshotKey) => snapshotKey.split("(")[0];

/** A dependency's lockfile version -> its snapshot key ("npm:" aliases name another package). */
function snapshotKeyOf(name, version) {
  const base = version.split("(")[0];
  return base.lastIndexOf("@") > 0 ? version : `${name}@${version}`;
}

function splitNameVersion(key) {
  const at = key.lastIndexOf("@");
  if (at <= 0) fail(`lockfile package key without a version: ${key}`);
  return { name: key.slice(0, at), version: key.slice(at + 1) };
}

/** The registry tarball pnpm fetches for a package the lockfile resolved from the registry. */
export function tarballPath(key) {
  const { name, version } = splitNameVersion(key);
  const base = name.startsWith("@") ? name.split("/")[1] : name;
  return `/${name}/-/${base}-${version}.tgz`;
}

/** pnpm's installability rule for one of os/cpu/libc: "!x" excludes, plain names include. */
export function admits(list, value) {
  if (list == null || value == null) return true;
  if (list.includes("any")) return true;
  if (list.includes(`!${value}`)) return false;
  const positive = list.filter((entry) => !entry.startsWith("!"));
  return positive.length === 0 || positive.includes(value);
}

const admitsSystem = (pkg, platform) =>
  admits(pkg.os, platform.os) && admits(pkg.cpu, platform.cpu) && admits(pkg.libc, platform.libc);

/**
 * The packages (by `packages:` key) reached from `roots` through snapshots. With a platform, a
 * package its os/cpu/libc do not admit is left out with everything only it leads to, as pnpm
 * skips an optional dependency that does not fit the host.
 */
function closure(doc, roots, where, platform = null) {
  const seen = new Set();
  const stack = [...roots];
  while (stack.length) {
    const snapshotKey = stack.pop();
    if (seen.has(snapshotKey)) continue;
    const key = packageKey(snapshotKey);
    const pkg = doc.packages?.[key];
    if (!pkg) fail(`${where}: package ${key} is in a snapshot but not in packages`);
    if (platform && !admitsSystem(pkg, platform)) continue;
    seen.add(snapshotKey);
    const snapshot = doc.snapshots?.[snapshotKey];
    if (snapshot === undefined) fail(`${where}: snapshot ${snapshotKey} is missing`);
    for (const field of ["dependencies", "optionalDependencies"]) {
      for (const [name, version] of Object.entries(snapshot?.[field] ?? {})) {
        stack.push(snapshotKeyOf(name, String(version)));
      }
    }
  }
  return new Set([...seen].map(packageKey));
}

function importerRoots(importer) {
  const roots = [];
  for (const field of ["dependencies", "devDependencies", "optionalDependencies"]) {
    for (const [name, entry] of Object.entries(importer?.[field] ?? {})) {
      const version = String(entry?.version ?? "");
      if (version === "") fail(`importer dependency ${name} has no version`);
      if (version.startsWith("link:")) continue; // a workspace project: installed as its own importer
      roots.push(snapshotKeyOf(name, version));
    }
  }
  return roots;
}

function tarballEntry(doc, key, where) {
  const pkg = doc.packages?.[key];
  if (!pkg) fail(`${where}: package ${key} is in a snapshot but not in packages`);
  const resolution = pkg.resolution ?? {};
  if (resolution.tarball || resolution.type || resolution.directory || resolution.repo) {
    fail(`${where}: ${key} is not resolved from the npm registry (${JSON.stringify(resolution)})`);
  }
  if (!/^sha512-[A-Za-z0-9+/]{86}==$/.test(resolution.integrity ?? "")) {
    fail(`${where}: ${key} has no sha512 integrity (${resolution.integrity})`);
  }
  return { pkg, hash: resolution.integrity };
}

/**
 * The content of nix/npm-tarballs.json.
 * @param {object} input
 * @param {string} input.lockfileText pnpm-lock.yaml
 * @param {Record<string, string>} input.importerNames importer path -> package name
 * @param {string[]} input.installExclude package names `pnpm install` leaves out
 */
export function npmTarballs({ lockfileText, importerNames, installExclude }) {
  const documents = parseLockfile(lockfileText);
  const main = documents.find(
    (doc) => doc.importers && doc.snapshots && !doc.importers["."]?.packageManagerDependencies,
  );
  const env = documents.find((doc) => doc.importers?.["."]?.packageManagerDependencies);
  if (!main) fail("pnpm-lock.yaml: no document with the workspace's importers");
  if (!env) fail("pnpm-lock.yaml: no packageManagerDependencies document (is it written by pnpm 12?)");

  for (const name of installExclude) {
    if (!Object.values(importerNames).includes(name))
      fail(`installExclude names ${name}, which is not a workspace project`);
  }
  const importers = Object.keys(main.importers).filter((path) => {
    const name = importerNames[path];
    if (name === undefined) fail(`pnpm-lock.yaml importer ${path} has no package.json name`);
    return !installExclude.includes(name);
  });
  const roots = importers.flatMap((path) => importerRoots(main.importers[path]));
  const installed = Object.fromEntries(
    Object.entries(systems).map(([system, platform]) => [system, closure(main, roots, system, platform)]),
  );

  const pnpmEntry = env.importers["."].packageManagerDependencies.pnpm;
  if (!pnpmEntry?.version) fail("pnpm-lock.yaml: packageManagerDependencies has no pnpm");
  const pnpmVersion = String(pnpmEntry.version).split("(")[0];
  const pnpmRoot = snapshotKeyOf("pnpm", String(pnpmEntry.version));

  /** @type {Record<string, { path: string, hash: string }>} */
  const tarballs = {};
  /** @type {Record<string, string[]>} */
  const admitted = Object.fromEntries(Object.keys(systems).map((system) => [system, []]));
  const add = (doc, key, where) => {
    const { pkg, hash } = tarballEntry(doc, key, where);
    if (tarballs[key] && tarballs[key].hash !== hash) fail(`${key}: two integrity hashes in the lockfile`);
    tarballs[key] = { path: tarballPath(key), hash };
    return pkg;
  };
  for (const [system, keys] of Object.entries(installed)) {
    for (const key of [...keys].sort()) {
      add(main, key, system);
      admitted[system].push(key);
    }
  }

  // The pnpm that wrote the lockfile: its wrapper package (node-gyp, which pnpm runs for native
  // addons) and the one native binary package that fits each system.
  add(env, packageKey(pnpmRoot), "packageManagerDependencies");
  /** @type {Record<string, string>} */
  const exe = {};
  for (const [system, platform] of Object.entries(systems)) {
    const keys = [...closure(env, [pnpmRoot], `packageManagerDependencies (${system})`, platform)];
    const binaries = keys.filter((key) => key !== packageKey(pnpmRoot));
    if (binaries.length !== 1) {
      fail(
        `pnpm ${pnpmVersion} for ${system}: expected one binary package, found ${binaries.join(", ") || "none"}`,
      );
    }
    exe[system] = binaries[0];
    add(env, binaries[0], "packageManagerDependencies");
  }

  return {
    $comment:
      "Generated by nix/npm-tarballs.mjs from pnpm-lock.yaml; do not edit. tarballs: every npm tarball the Nix build fetches (fetchurl with the lockfile's integrity hash); path is where the build's loopback registry serves it. platforms: the systems the flake builds, as pnpm's --os/--cpu/--libc. systems: the tarballs each system's `pnpm install` fetches. pnpm: the pnpm that wrote the lockfile, which the build runs.",
    registry: "https://registry.npmjs.org",
    platforms: systems,
    pnpm: { version: pnpmVersion, wrapper: `pnpm@${pnpmVersion}`, exe },
    tarballs,
    systems: admitted,
  };
}

export function readImporterNames(root, lockfileText) {
  const documents = parseLockfile(lockfileText);
  const main = documents.find(
    (doc) => doc.importers && doc.snapshots && !doc.importers["."]?.packageManagerDependencies,
  );
  if (!main) fail("pnpm-lock.yaml: no document with the workspace's importers");
  const names = {};
  for (const path of Object.keys(main.importers)) {
    const manifest = join(root, path, "package.json");
    if (!existsSync(manifest)) fail(`pnpm-lock.yaml importer ${path}: ${manifest} is missing`);
    names[path] = JSON.parse(readFileSync(manifest, "utf8")).name ?? (path === "." ? "." : undefined);
  }
  return names;
}

export function render(value) {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function main(argv) {
  let root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  let check = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--check") check = true;
    else if (argv[i] === "--root") root = resolve(argv[++i] ?? fail("--root needs a directory"));
    else fail(`unknown argument ${argv[i]} (usage: npm-tarballs.mjs [--check] [--root DIR])`);
  }
  const lockfileText = readFileSync(join(root, "pnpm-lock.yaml"), "utf8");
  const sandbox = JSON.parse(readFileSync(join(root, "nix/sandbox.json"), "utf8"));
  const expected = render(
    npmTarballs({
      lockfileText,
      importerNames: readImporterNames(root, lockfileText),
      installExclude: sandbox.installExclude ?? fail("nix/sandbox.json has no installExclude"),
    }),
  );
  const target = join(root, "nix/npm-tarballs.json");
  if (!check) {
    writeFileSync(target, expected);
    console.log(`npm-tarballs: wrote ${target}`);
    return 0;
  }
  // Compared as data: a formatter may lay the file out differently.
  let actual = null;
  try {
    actual = JSON.parse(readFileSync(target, "utf8"));
  } catch {}
  if (isDeepStrictEqual(actual, JSON.parse(expected))) return 0;
  console.error(
    "npm-tarballs: nix/npm-tarballs.json does not describe pnpm-lock.yaml (or nix/sandbox.json installExclude).\n" +
      "  Regenerate it (no Nix needed): node nix/npm-tarballs.mjs",
  );
  return 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof LockfileError)) throw error;
    console.error(`npm-tarballs: ${error.message}`);
    process.exitCode = 1;
  }
}
