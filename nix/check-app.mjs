#!/usr/bin/env node
// Checks an installed app of nix/apps.json inside the Nix sandbox (installCheckPhase), with
// nothing but node: a CLI answers --version, and node leaves a --env-file among its arguments to it
// (the wrapper ends node's options with `--`); a Pi package is loaded by the real Pi (both lines,
// from the build's workspace) and registers its provider; every prebuilt executable it ships
// (apps.json nativeExecutables) runs. Plain Node with no dependencies; packages/repo-checks runs
// it against made-up installs.
//
//   node nix/check-app.mjs <apps.json> <app> <out> [<workspace root>]
//
// <out> is the package's store path ($out: bin/ and lib/<app>/). A Pi package needs the
// workspace root, where its Pi hosts (apps.json piHosts) are installed.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

class CheckError extends Error {}

const fail = (message) => {
  throw new CheckError(message);
};

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    fail(`cannot read ${path}: ${error.message}`);
  }
}

/** Runs a program with a fresh HOME and no inherited secrets; a hang fails after timeoutMs. */
function run(command, args, { timeoutMs = 60_000 } = {}) {
  const home = mkdtempSync(join(tmpdir(), "check-app-home-"));
  try {
    const result = spawnSync(command, args, {
      encoding: "utf8",
      timeout: timeoutMs,
      killSignal: "SIGKILL",
      env: { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: tmpdir(), NO_COLOR: "1" },
    });
    if (result.error) fail(`${command} ${args.join(" ")}: ${result.error.message}`);
    if (result.signal) fail(`${command} ${args.join(" ")}: killed by ${result.signal} (a hang or a crash)`);
    return result;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function checkVersion(app, out, version) {
  const program = join(out, "bin", app.mainProgram);
  const result = run(program, ["--version"]);
  if (result.status !== 0) {
    fail(`${app.mainProgram} --version exited ${result.status}: ${result.stderr.trim()}`);
  }
  if (!result.stdout.includes(version)) {
    fail(
      `${app.mainProgram} --version printed ${JSON.stringify(result.stdout.trim())}, not the version ${version}`,
    );
  }
  return `${app.mainProgram} --version: ${result.stdout.trim()}`;
}

/**
 * Node acts on a --env-file anywhere on its command line, even after the script's name, unless `--`
 * ends its options first: a wrapper without it would run the file's NODE_OPTIONS (`--require`) in the
 * program. Given one whose NODE_OPTIONS writes a marker, the program must answer for itself.
 */
function checkEnvFileLeftToProgram(app, out) {
  const program = join(out, "bin", app.mainProgram);
  const dir = mkdtempSync(join(tmpdir(), "check-app-env-file-"));
  try {
    const marker = join(dir, "required-ran");
    writeFileSync(
      join(dir, "mark.cjs"),
      `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "");\n`,
    );
    writeFileSync(join(dir, "hostile.env"), `NODE_OPTIONS=--require ${join(dir, "mark.cjs")}\n`);
    const result = run(program, ["--env-file", join(dir, "hostile.env")]);
    if (existsSync(marker)) {
      fail(
        `${app.mainProgram} --env-file F: node ran F's NODE_OPTIONS before the program (start node with \`--\` before the entry)`,
      );
    }
    return `${app.mainProgram} --env-file F: left to the program (exit ${result.status}), node read no file`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The model table rows of a provider (Pi 0.73 prints the table on stderr, so both streams count). */
function providerRows({ stdout, stderr }, provider) {
  return `${stdout}\n${stderr}`.split("\n").filter((line) => line.trim().split(/\s+/)[0] === provider);
}

function checkPiPackage(app, libDir, workspaceRoot) {
  if (!workspaceRoot) fail("a Pi package is checked with the workspace root (where its Pi hosts are)");
  const lines = [];
  for (const host of app.piHosts ?? fail(`${app.workspace}: apps.json has no piHosts`)) {
    const hostDir = join(workspaceRoot, app.dir, "node_modules", host);
    const manifest = readJson(join(hostDir, "package.json"));
    const bin = typeof manifest.bin === "string" ? manifest.bin : manifest.bin?.pi;
    if (!bin) fail(`${host} has no pi bin`);
    const cli = join(hostDir, bin);
    const list = (extra) =>
      run(process.execPath, [cli, "--no-extensions", ...extra, "--list-models", app.piProvider]);
    const without = list([]);
    if (providerRows(without, app.piProvider).length > 0) {
      fail(
        `${host} ${manifest.version} lists provider ${app.piProvider} without the package: the check cannot tell`,
      );
    }
    const withPackage = list(["-e", libDir]);
    const rows = providerRows(withPackage, app.piProvider);
    if (withPackage.status !== 0 || rows.length === 0) {
      fail(
        `${host} ${manifest.version} did not load ${libDir} (provider ${app.piProvider} has no models; exit ${withPackage.status}):\n` +
          `${withPackage.stdout}${withPackage.stderr}`.trim(),
      );
    }
    lines.push(`${host} ${manifest.version} loads it: ${rows.map((row) => row.split(/\s+/)[1]).join(", ")}`);
  }
  return lines;
}

function findFiles(dir, name, found = []) {
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) findFiles(path, name, found);
    else if (entry.isFile() && entry.name === name) found.push(path);
  }
  return found;
}

function checkNativeExecutables(app, libDir) {
  const lines = [];
  for (const name of app.nativeExecutables ?? []) {
    const files = findFiles(join(libDir, "node_modules"), name).filter((path) => statSync(path).mode & 0o111);
    if (files.length === 0)
      fail(`no executable named ${name} under ${libDir}/node_modules (apps.json nativeExecutables)`);
    for (const file of files) {
      const result = run(file, ["--version"]);
      if (result.status !== 0) {
        fail(`${file} --version exited ${result.status}: ${`${result.stdout}${result.stderr}`.trim()}`);
      }
      lines.push(`${name} --version: ${result.stdout.trim()}`);
    }
  }
  return lines;
}

function checkApp({ appsJson, name, out, workspaceRoot }) {
  const app = readJson(appsJson).apps?.[name] ?? fail(`${name} is not an app in ${appsJson}`);
  const libDir = join(out, "lib", name);
  const { version } = readJson(join(libDir, "package.json"));
  const lines = [];
  if (app.kind === "cli") lines.push(checkVersion(app, out, version), checkEnvFileLeftToProgram(app, out));
  else if (app.kind === "pi-package") lines.push(...checkPiPackage(app, libDir, workspaceRoot));
  else fail(`${name}: unknown kind ${app.kind}`);
  lines.push(...checkNativeExecutables(app, libDir));
  return lines;
}

const [appsJson, name, out, workspaceRoot] = process.argv.slice(2);
try {
  if (!appsJson || !name || !out) fail("usage: check-app.mjs <apps.json> <app> <out> [<workspace root>]");
  for (const line of checkApp({ appsJson, name, out, workspaceRoot }))
    console.log(`check-app: ${name}: ${line}`);
} catch (error) {
  if (!(error instanceof CheckError)) throw error;
  console.error(`check-app: ${name ?? ""}: ${error.message}`);
  process.exit(1);
}
