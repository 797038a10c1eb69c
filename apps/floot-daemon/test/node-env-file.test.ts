import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FlootSession } from "@bridgeworks/protocol";
import { silentLogger } from "@bridgeworks/runtime";
import { ProcessTracker } from "@bridgeworks/test-harness";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { type RunningDaemon, startDaemon } from "../src/daemon/daemon.js";
import { appDir, bundlePath } from "./daemon-harness.js";

// Node acts on a --env-file anywhere on its command line, even among the script's own arguments
// (nodejs/node#54232; measured on Node 20.20, 22.23 and 24.22): `node floot.mjs session create
// --env-file F` runs F's NODE_OPTIONS (`--require`) in the floot CLI before floot reads a byte.
// floot's option is --env-from; every launcher ends Node's options with `--` (the bin's shebang
// `#!/usr/bin/env -S node --`, `npm run floot --` through package.json and scripts/bootstrap.mjs; the
// Nix wrapper is checked by nix/check-app.mjs in the Nix build), so a --env-file typed out of habit
// reaches floot, which refuses it naming --env-from. On this machine's Node and on Node 22.

const repoRoot = join(appDir, "../..");

const versionOf = (binary: string) => execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
// Node 22 from the npm registry (scripts/ensure-node.mjs), fetched before the tests are collected.
const node22 = execFileSync(process.execPath, [join(repoRoot, "scripts/ensure-node.mjs"), "22"], {
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
}).trim();
const nodes = [
  { binary: process.execPath, version: versionOf(process.execPath), binDir: "" },
  { binary: node22, version: versionOf(node22), binDir: "" },
];

const tracker = new ProcessTracker();
let root: string;
let stateDir: string;
let daemon: RunningDaemon;
let envFile: string;
let marker: string;
let missingPreload: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "floot-node-env-file-"));
  stateDir = join(root, "state");
  marker = join(root, "required-ran");
  missingPreload = join(root, "no-such-preload.so");
  // Whatever Node process loads this appends its version and argv: the file's NODE_OPTIONS ran there.
  writeFileSync(
    join(root, "mark.cjs"),
    `require("node:fs").appendFileSync(${JSON.stringify(marker)}, process.version + " " + process.argv.slice(1).join(" ") + "\\n");\n`,
  );
  envFile = join(root, "hostile.env");
  writeFileSync(
    envFile,
    [
      `NODE_OPTIONS=--require ${join(root, "mark.cjs")}`,
      `LD_PRELOAD=${missingPreload}`,
      "FROM_FILE=file-value",
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  // A dir holding only `node`, first on PATH: the Node `#!/usr/bin/env -S node --` and `npm run` start.
  for (const [index, node] of nodes.entries()) {
    node.binDir = join(root, `node-${index}`);
    mkdirSync(node.binDir);
    symlinkSync(node.binary, join(node.binDir, "node"));
  }
  daemon = await startDaemon({
    stateDir,
    env: { FLOOT_RUNTIME_DIR: join(root, "run"), PATH: "/nonexistent" },
    logger: silentLogger,
  });
});

afterEach(async () => {
  await tracker.endAll();
  rmSync(marker, { force: true });
});

afterAll(async () => {
  await daemon?.stop();
  rmSync(root, { recursive: true, force: true });
});

async function run(command: string, args: string[], binDir: string, cwd = root) {
  // HOME and the rest as they are (pnpm finds its store through them when `npm run` installs).
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${binDir}:/usr/bin:/bin` };
  for (const name of ["NODE_OPTIONS", "FLOOT_STATE_DIR", "LD_PRELOAD"]) delete env[name];
  const child = tracker.spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  const { code } = await child.exited;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

const requiredRan = () => (existsSync(marker) ? readFileSync(marker, "utf8") : "");
// No CLI (and no sandbox) on this daemon's PATH: the sessions run no turn.
const create = (...options: string[]) => [
  "session",
  "create",
  "--backend",
  "claude",
  "--unconfined",
  ...options,
  "--state",
  stateDir,
];
const renamed =
  "floot session create: --env-file: is now --env-from FILE: --env-file is Node's own option, which Node acts on even after the script's name (see 'floot session create --help')\n";

test("the checks can fail: Node started without `--` runs the file's NODE_OPTIONS; a preload in the environment is tried", async () => {
  for (const node of nodes) {
    const result = await run(
      join(node.binDir, "node"),
      [bundlePath, ...create("--env-file", envFile)],
      node.binDir,
    );
    expect(result.code).toBe(2);
    expect(requiredRan()).toContain(`${node.version} ${bundlePath} session create`);
    rmSync(marker);
  }
  const preload = await run("/usr/bin/env", [`LD_PRELOAD=${missingPreload}`, "/bin/true"], "/usr/bin");
  expect(preload.stderr).toContain(missingPreload);
});

describe.each(nodes.map((node) => [node.version, node] as const))("Node %s", (_version, node) => {
  test.each([[["--env-file", "FILE"]], [["--env-file=FILE"]], [["--env-file-if-exists", "FILE"]]])(
    "the npm bin (its shebang) with %j: floot refuses it naming --env-from, Node never read the file",
    async (options) => {
      const argv = create(...options.map((each) => each.replace("FILE", envFile)));
      const result = await run(bundlePath, argv, node.binDir);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^floot session create: --env-file[^\n]*--env-from FILE[^\n]*\n$/);
      if (options[0] !== "--env-file-if-exists") expect(result.stderr).toBe(renamed);
      expect(requiredRan()).toBe("");
      expect(result.stderr).not.toContain(missingPreload);
    },
  );

  test("a missing --env-file is floot's usage error, not Node's exit 9", async () => {
    const result = await run(bundlePath, create("--env-file", join(root, "missing.env")), node.binDir);
    expect(result).toEqual({ code: 2, stdout: "", stderr: renamed });
  });

  test("npm run floot -- … --env-file F: bootstrap and the CLI start after `--`, floot refuses it", async () => {
    const argv = ["run", "--silent", "floot", "--", ...create("--env-file", envFile)];
    const result = await run("npm", argv, node.binDir, repoRoot);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(renamed);
    expect(requiredRan()).toBe("");
    expect(result.stderr).not.toContain(missingPreload);
  });

  test("--env-from F: the file's lines are the session's env, and none of them touched the CLI", async () => {
    const result = await run(bundlePath, create("--env-from", envFile, "--json"), node.binDir);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const session = JSON.parse(result.stdout) as FlootSession;
    const stored = JSON.parse(readFileSync(join(stateDir, "sessions", session.id, "session.json"), "utf8"));
    expect(stored.env).toEqual({
      NODE_OPTIONS: `--require ${join(root, "mark.cjs")}`,
      LD_PRELOAD: missingPreload,
      FROM_FILE: "file-value",
    });
    expect(requiredRan()).toBe("");
  });
});
