import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FlootSession, SubmitSecretResponse, TurnRecord } from "@bridgeworks/protocol";
import { silentLogger } from "@bridgeworks/runtime";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningDaemon, startDaemon } from "../src/daemon/daemon.js";
import {
  bundlePath,
  FlootWorld,
  filesContaining,
  providedSecret,
  requestSecretStep,
} from "./daemon-harness.js";

// `floot secret submit`, `--env NAME`, `--env-from FILE` and `floot send <session> -` keep values off every process's argv:
// while the built CLI runs, every /proc/*/cmdline is read again and again, and no value may show up.

let root: string;
let stateDir: string;
let daemon: RunningDaemon;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "floot-argv-"));
  stateDir = join(root, "state");
  daemon = await startDaemon({
    stateDir,
    // No turn runs here: a missing CLI fails the turn, the prompt is still journaled.
    env: {
      FLOOT_RUNTIME_DIR: join(root, "run"),
      PATH: "/nonexistent",
      FLOOT_CLAUDE_COMMAND: "/nonexistent/claude",
    },
    logger: silentLogger,
  });
});

afterAll(async () => {
  await daemon.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Pids whose argv holds any of `needles`, from every /proc/<pid>/cmdline readable now. */
function argvHolding(needles: readonly string[]): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (needles.some((needle) => cmdline.includes(needle))) found.push(Number(name));
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}

/** Runs `argv` as a process, scanning every process's argv for `needles` until it exits. */
async function runWatched(
  command: string,
  argv: string[],
  needles: readonly string[],
  options: { env?: NodeJS.ProcessEnv; stdin?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string; seenIn: number[]; scans: number }> {
  const child = spawn(command, argv, { env: options.env ?? { PATH: process.env.PATH }, stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  child.stdin.end(options.stdin ?? "");
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  let done = false;
  void exited.then(() => (done = true));
  const seenIn = new Set<number>();
  let scans = 0;
  while (!done) {
    for (const pid of argvHolding(needles)) seenIn.add(pid);
    scans += 1;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const code = await exited;
  return { code, stdout, stderr, seenIn: [...seenIn], scans };
}

const floot = (args: string[]) => [bundlePath, ...args, "--state", stateDir];

describe("values off argv", () => {
  test("the scanner sees a value that is in argv (it can fail)", async () => {
    const canary = `canary-${randomBytes(8).toString("hex")}`;
    const result = await runWatched("sh", ["-c", "sleep 0.3", "sh", canary], [canary]);
    expect(result.seenIn.length).toBeGreaterThan(0);
  });

  test("session create --env NAME and --env-from FILE: values reach the session, no argv holds them", async () => {
    const fromEnv = `env-value-${randomBytes(8).toString("hex")}`;
    const fromFile = `file-value-${randomBytes(8).toString("hex")}`;
    const envFile = join(root, "session.env");
    writeFileSync(envFile, `# a comment\n\nexport FROM_FILE="${fromFile}"\nPLAIN=x\n`, { mode: 0o600 });
    const result = await runWatched(
      process.execPath,
      floot([
        "session",
        "create",
        "--backend",
        "claude",
        // No CLI (and no sandbox) on this daemon's PATH: the session runs none of its turns.
        "--unconfined",
        "--env",
        "FROM_ENV",
        "--env-from",
        envFile,
        "--json",
      ]),
      [fromEnv, fromFile],
      { env: { PATH: process.env.PATH, FROM_ENV: fromEnv } },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.scans).toBeGreaterThan(1);
    expect(result.seenIn).toEqual([]);
    const session = JSON.parse(result.stdout) as FlootSession;
    const stored = JSON.parse(readFileSync(join(stateDir, "sessions", session.id, "session.json"), "utf8"));
    expect(stored.env).toEqual({ FROM_FILE: fromFile, PLAIN: "x", FROM_ENV: fromEnv });
    expect(result.stdout).not.toContain(fromEnv);
  });

  test("send <session> - takes the prompt from stdin, and no argv holds it", async () => {
    const session = JSON.parse(
      (
        await runWatched(
          process.execPath,
          floot(["session", "create", "--backend", "claude", "--unconfined", "--json"]),
          [],
        )
      ).stdout,
    ) as FlootSession;
    const prompt = `a prompt with a secret ${randomBytes(8).toString("hex")}\nsecond line`;
    const result = await runWatched(
      process.execPath,
      floot(["send", session.id, "-", "--json"]),
      [prompt.slice(0, 40)],
      {
        stdin: `${prompt}\n`,
      },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.seenIn).toEqual([]);
    expect((JSON.parse(result.stdout) as TurnRecord).input).toEqual({ prompt });
  });

  test("a bad --env-from line is a usage error naming file:line, not the line", async () => {
    const envFile = join(root, "bad.env");
    writeFileSync(envFile, "GOOD=1\nthis line has hunter2 and no equals sign\n", { mode: 0o600 });
    const result = await runWatched(
      process.execPath,
      floot(["session", "create", "--backend", "claude", "--unconfined", "--env-from", envFile]),
      [],
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `floot session create: --env-from: ${envFile}:2: not a NAME=VALUE line (see 'floot session create --help')\n`,
    );
    expect(result.stderr).not.toContain("hunter2");
  });

  test("send - with empty stdin is a usage error", async () => {
    const result = await runWatched(process.execPath, floot(["send", "s_none", "-"]), [], { stdin: "" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("stdin held no prompt");
  });
});

describe("secret submit: the value off argv", () => {
  let world: FlootWorld | undefined;

  afterAll(async () => {
    const problems = (await world?.dispose()) ?? [];
    expect(problems).toEqual([]);
  });

  test("the value goes from stdin to the waiting turn, and no argv holds it (the same scan sees it in argv)", async () => {
    const provided = providedSecret();
    world = await FlootWorld.create("claude", {
      steps: [
        { match: provided, repeat: true, response: { events: [{ type: "text", text: "Got the token." }] } },
        requestSecretStep("[secret]"),
      ],
    });
    const w = world;
    await w.startDaemon();
    const submit = (request: string, stdin: string, needles: readonly string[]) =>
      runWatched(
        process.execPath,
        [bundlePath, "secret", "submit", request, "--state", w.stateDir, "--json"],
        needles,
        { env: w.env.env, stdin },
      );

    // Self-check: the same command, with a value where argv would hold it, is seen by the scan.
    const canary = `sr_canary${randomBytes(8).toString("hex")}`;
    const seen = await submit(canary, "x\n", [canary]);
    expect(seen.code).not.toBe(0);
    expect(seen.seenIn.length).toBeGreaterThan(0);

    const session = await w.createSession();
    const turn = await w.send(session.id, "[secret] deploy it");
    await w.waitForTurn(turn.id, (t) => t.phase === "awaiting_secret", "awaiting_secret");
    const [pending] = await w.secretRequests();
    const secret = `argv-secret-${randomBytes(12).toString("hex")}`;
    const result = await submit(pending!.id, `${secret}\n`, [secret]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.scans).toBeGreaterThan(1);
    expect(result.seenIn).toEqual([]);
    expect((JSON.parse(result.stdout) as SubmitSecretResponse).deliveredTo).toBe("call");
    expect((await w.waitForEnd(turn.id)).phase).toBe("completed");
    expect(result.stdout).not.toContain(secret);
    expect(filesContaining([w.stateDir], secret)).toEqual([]);
  }, 180_000);
});
