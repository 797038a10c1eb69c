import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { promisify } from "node:util";
import { commandPaths, rootOf, synopsis } from "@bridgeworks/cli";
import { describeCommandTable } from "@bridgeworks/cli/testing";
import { silentLogger } from "@bridgeworks/runtime";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { FlootContext } from "../src/cli/context.js";
import { flootProgram, runFloot } from "../src/cli/program.js";
import { startDaemon } from "../src/daemon/daemon.js";
import { bundlePath } from "./daemon-harness.js";

// The conventions of every `floot` command, driven from the command table itself: a command added to
// the table is covered here without a line of this file changing.

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  version: string;
};
/** The CLI reference, which must list every command with every flag (the README links it). */
const reference = {
  path: "docs/cli.md",
  text: readFileSync(new URL("../docs/cli.md", import.meta.url), "utf8"),
};
const commands = commandPaths(rootOf(flootProgram).commands);

let root: string;
/** A state dir no daemon runs on: anything that looks the daemon up fails with exit 1, not 2. */
let noDaemon: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "floot-cli-"));
  noDaemon = join(root, "no-daemon");
  execFileSync(process.execPath, [join(bundlePath, "../../node_modules/tsdown/dist/run.mjs")], {
    cwd: join(bundlePath, "../.."),
    stdio: "ignore",
  });
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function floot(...argv: string[]) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on("data", (chunk: Buffer) => out.push(chunk.toString()));
  stderr.on("data", (chunk: Buffer) => err.push(chunk.toString()));
  const context: FlootContext = {
    env: { FLOOT_STATE_DIR: noDaemon, HOME: root },
    cwd: root,
    stdout,
    stderr,
    stdin: new PassThrough(),
    signals: process,
  };
  const code = await runFloot(argv, context);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

const runBundle = (argv: string[]) =>
  promisify(execFile)(process.execPath, [bundlePath, ...argv], {
    env: { PATH: process.env.PATH, HOME: root, FLOOT_STATE_DIR: noDaemon },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );

describe("the built floot", () => {
  test("--version prints package.json's version without any daemon, exit 0", async () => {
    expect(await runBundle(["--version"])).toEqual({ code: 0, stdout: `${manifest.version}\n`, stderr: "" });
  });

  test("--help lists every command with all its flags, on stdout, exit 0", async () => {
    const result = await runBundle(["--help"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    for (const flag of [
      "--codex-config KEY=TOML",
      "--allowed-tool TOOL",
      "--permission-mode",
      "--env NAME",
      "--env-from FILE",
    ]) {
      expect(result.stdout).toContain(flag);
    }
    for (const { path, command } of commands)
      expect(result.stdout).toContain(synopsis("floot", path, command));
  });

  test("session list --help exits 0; an unknown flag exits 2 naming it", async () => {
    expect(await runBundle(["session", "list", "--help"])).toMatchObject({ code: 0, stderr: "" });
    expect(await runBundle(["session", "list", "--bogus"])).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "floot session list: --bogus: is not an option of floot session list (see 'floot session list --help')\n",
    });
  });
});

describeCommandTable({ program: flootProgram, run: (argv) => floot(...argv), reference });

describe("usage before the daemon", () => {
  test.each([
    [["session", "create"], "--backend: is required"],
    [["session", "create", "--backend", "gemini"], '--backend: must be claude or codex, got "gemini"'],
    [
      ["session", "create", "--backend", "claude", "--env", "TOKEN=hunter2"],
      'got "TOKEN=…"; for NAME=VALUE pairs use --env-from',
    ],
    [
      ["session", "create", "--backend", "claude", "--env", "FLOOT_TEST_SURELY_UNSET"],
      "--env: FLOOT_TEST_SURELY_UNSET is not set in floot's environment",
    ],
    [
      ["session", "create", "--backend", "claude", "--env-from", "/nonexistent/x.env"],
      "--env-from: cannot read",
    ],
    [
      ["session", "create", "--backend", "claude", "--env-file", "/nonexistent/x.env"],
      "--env-file: is now --env-from FILE",
    ],
    [
      ["session", "create", "--backend", "claude", "--permission-mode", "yolo"],
      "--permission-mode: must be one of",
    ],
    [["turn", "follow", "t1", "--from", "-1"], "--from: needs a value"],
    [["turn", "follow", "t1", "--from", "x"], '--from: must be an integer from 0 to 999999999, got "x"'],
    [["daemon", "--port", "70000"], '--port: must be an integer from 0 to 65535, got "70000"'],
    [["daemon", "--cli-nice", "20"], '--cli-nice: must be an integer from 0 to 19, got "20"'],
    [["daemon", "--cli-starts", "0"], '--cli-starts: must be an integer from 1 to 1000, got "0"'],
    [["turn", "frob", "t1"], '"frob": is not a floot turn command'],
  ])("%j: exit 2, %s", async (argv, message) => {
    const result = await floot(...argv);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  test("a well-formed command with no daemon is a failure (exit 1) naming the state dir", async () => {
    const result = await floot("session", "list");
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `floot: no floot daemon runs on ${noDaemon} (${noDaemon}/daemon.json is missing); start one with: floot daemon\n`,
    );
    const json = await floot("session", "list", "--json");
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: "failed" } });
  });
});

describe("with a daemon", () => {
  test("an empty session list is said in words; --json gives the API's record", async () => {
    const stateDir = join(root, "state");
    const daemon = await startDaemon({
      stateDir,
      env: { FLOOT_RUNTIME_DIR: join(root, "run"), PATH: process.env.PATH },
      logger: silentLogger,
    });
    try {
      expect(await floot("session", "list", "--state", stateDir)).toEqual({
        code: 0,
        stdout: "no sessions\n",
        stderr: "",
      });
      expect(JSON.parse((await floot("session", "list", "--state", stateDir, "--json")).stdout)).toEqual({
        sessions: [],
      });
      expect((await floot("secret", "list", "--state", stateDir)).stdout).toBe("no secret requests\n");
      const created = await floot(
        "session",
        "create",
        "--backend",
        "codex",
        "--unconfined",
        "--state",
        stateDir,
      );
      const id = created.stdout.trim();
      expect(await floot("session", "rename", id, "Nightly", "build", "--state", stateDir)).toEqual({
        code: 0,
        stdout: `${id}  Nightly build\n`,
        stderr: "",
      });
      const found = await floot("session", "search", "nightly", "--state", stateDir);
      expect(found.stdout).toBe(`${id}  Nightly build\n  title: [Nightly] build\n`);
      const refused = await floot("session", "rename", id, "tab\there", "--state", stateDir);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        "title: title must not contain control characters (U+0009 at character 4)",
      );
      const syntax = await floot("session", "search", "NEAR(", "--state", stateDir, "--json");
      expect(syntax.code).toBe(1);
      expect(JSON.parse(syntax.stderr)).toMatchObject({ error: { code: "invalid_search_query" } });
      const missing = await floot("turn", "show", "t_nope", "--state", stateDir, "--json");
      expect(missing.code).toBe(1);
      expect(JSON.parse(missing.stderr)).toMatchObject({ error: { code: "not_found" } });
    } finally {
      await daemon.stop();
    }
  });
});
