#!/usr/bin/env node
// Sets up a checkout on a machine that has only Node.js and npm, then runs one job:
//   node scripts/bootstrap.mjs test [vitest args...]   (npm test)
//   node scripts/bootstrap.mjs start [floot args...]   (npm start)
//   node scripts/bootstrap.mjs check                   (npm run check: typecheck and lint)
//   node scripts/bootstrap.mjs floot [args...]         (npm run floot -- ...: the CLI on npm start's daemon)
// pnpm comes from npm (corepack cannot verify the registry's signatures here) into .tools/.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { supervise } from "./supervise.mjs";
import { ensureSystemPackages } from "./system-packages.mjs";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const [job, ...jobArgs] = process.argv.slice(2);
const jobs = { test: runTests, start: startDaemon, check: runChecks, floot: runFlootCli };

if (!(job in jobs)) {
  console.error(
    `bootstrap: unknown job ${JSON.stringify(job)}; expected one of: ${Object.keys(jobs).join(", ")}`,
  );
  process.exit(2);
}

const env = buildEnv();
const pnpm = ensurePnpm();
step("install", pnpm, ["install", "--frozen-lockfile", "--prefer-offline"], { quiet: job === "floot" });
await jobs[job](jobArgs);

async function runTests(args) {
  try {
    ensureSystemPackages();
  } catch (error) {
    console.error(`bootstrap: ${error.message}`);
    process.exit(1);
  }
  step("build", pnpm, ["run", "build"]);
  process.exitCode = await supervise("test", pnpm, ["exec", "vitest", "run", ...args], { cwd: root, env });
}

function runChecks() {
  step("typecheck", pnpm, ["run", "typecheck"]);
  step("lint", pnpm, ["run", "lint"]);
}

async function startDaemon(args) {
  const floot = buildFloot();
  console.error(
    `bootstrap: use the CLI on this daemon with: npm run floot -- <command> (try: npm run floot -- open)`,
  );
  // One sign-in link, written by the daemon to the terminal itself: never to stderr, which may be a log.
  const daemonArgs = ["--", floot, "daemon", "--sign-in-link", ...args];
  process.exitCode = await supervise("floot daemon", process.execPath, daemonArgs, {
    cwd: root,
    env,
  });
}

// The CLI's own output only: the build before it speaks up only when it fails.
function runFlootCli(args) {
  step("floot", process.execPath, ["--", buildFloot({ quiet: true }), ...args]);
}

// Node reads a --env-file anywhere on its command line, even among the script's own arguments, unless
// `--` ends Node's options first: floot (and this script, in package.json) are started after one.
// The checkout embeds its own state dir, so `npm start` never touches a user's daemon state.
function buildFloot({ quiet = false } = {}) {
  step("build", pnpm, ["run", "build", "--filter", "@bridgeworks/floot-daemon..."], { quiet });
  env.FLOOT_STATE_DIR ??= join(root, ".floot/state");
  return join(root, "apps/floot-daemon/bundle/floot.mjs");
}

function packageManagerVersion() {
  const { packageManager } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const match = /^pnpm@(\d+\.\d+\.\d+)$/.exec(packageManager ?? "");
  if (!match) throw new Error(`package.json packageManager must be pnpm@x.y.z, got ${packageManager}`);
  return match[1];
}

function ensurePnpm() {
  const version = packageManagerVersion();
  const local = join(root, ".tools/node_modules/.bin/pnpm");
  for (const candidate of ["pnpm", local]) {
    const probe = spawnSync(candidate, ["--version"], { env, encoding: "utf8" });
    if (probe.status === 0 && probe.stdout.trim() === version) return candidate;
  }
  console.error(`bootstrap: installing pnpm ${version} into .tools/ with npm`);
  step("pnpm", "npm", [
    "install",
    "--prefix",
    join(root, ".tools"),
    "--no-save",
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
    `pnpm@${version}`,
  ]);
  return local;
}

function buildEnv() {
  const result = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1" };
  result.PATH = [join(root, ".tools/node_modules/.bin"), result.PATH].join(":");
  // node-gyp (better-sqlite3) must build against the headers of the Node.js that runs it,
  // which ship beside it; downloading them is impossible on a closed network.
  const prefix = dirname(dirname(process.execPath));
  if (!result.npm_config_nodedir && existsSync(join(prefix, "include/node/node.h"))) {
    result.npm_config_nodedir = prefix;
  }
  return result;
}

/** Runs one step; a quiet one shows its output only when it fails. */
function step(name, command, args, { quiet = false } = {}) {
  const result = spawnSync(command, args, {
    cwd: root,
    env,
    stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (quiet && (result.error || result.status !== 0)) {
    process.stderr.write(result.stdout ?? "");
    process.stderr.write(result.stderr ?? "");
  }
  if (result.error) {
    console.error(`bootstrap: ${name}: ${result.error.message}`);
    process.exit(1);
  }
  if (result.status !== 0) {
    console.error(`bootstrap: ${name} failed (${result.signal ?? `exit ${result.status}`})`);
    process.exit(result.status ?? 1);
  }
}
