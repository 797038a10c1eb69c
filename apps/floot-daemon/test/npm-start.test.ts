import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type Backend, FlootDaemonFile, type FlootSession, type TurnRecord } from "@bridgeworks/protocol";
import { ProcessTracker, waitUntil } from "@bridgeworks/test-harness";
import { afterEach, expect, test } from "vitest";
import { FlootClient } from "../src/client/api-client.js";
import { appDir, bundlePath } from "./daemon-harness.js";

// The first thing a new user does: `npm start` (scripts/bootstrap.mjs start) on a machine without the
// agent CLIs, then sends a turn. Each turn fails naming the missing command; the daemon keeps serving.

const repoRoot = join(appDir, "../..");
const tracker = new ProcessTracker();
let root: string | undefined;
afterEach(async () => {
  await tracker.endAll();
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

test("npm start's daemon: floot send on a session whose CLI is missing fails that turn, the daemon serves on", async () => {
  root = mkdtempSync(join(tmpdir(), "floot-npm-start-"));
  const stateDir = join(root, "state");
  // pnpm and node, nothing else of the developer's PATH: no claude, no codex.
  const path = [
    join(repoRoot, ".tools/node_modules/.bin"),
    dirname(process.execPath),
    "/usr/bin",
    "/bin",
  ].join(":");
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: path, FLOOT_RUNTIME_DIR: join(root, "run") };
  for (const name of ["FLOOT_CLAUDE_COMMAND", "FLOOT_CODEX_COMMAND", "FLOOT_STATE_DIR"]) delete env[name];
  const bootstrap = tracker.spawn(
    process.execPath,
    [join(repoRoot, "scripts/bootstrap.mjs"), "start", "--state", stateDir, "--port", "0"],
    { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  const daemonFile = join(stateDir, "daemon.json");
  await waitUntil(
    () => {
      if (bootstrap.child.exitCode !== null) throw new Error(`npm start exited:\n${bootstrap.stderr()}`);
      return existsSync(daemonFile);
    },
    240_000,
    "npm start's daemon ready",
  );
  const file = FlootDaemonFile.parse(JSON.parse(readFileSync(daemonFile, "utf8")));
  // The sign-in link goes to the controlling terminal only; here there is none, so none is printed.
  await waitUntil(() => bootstrap.stderr().includes("run floot open"), 30_000, "npm start's sign-in note");
  expect(bootstrap.stderr()).not.toMatch(/#login=/);
  expect(bootstrap.stdout()).not.toMatch(/#login=/);
  const client = new FlootClient(file);

  for (const backend of ["claude", "codex"] satisfies Backend[]) {
    const session = await client.request<FlootSession>("POST", "/v1/sessions", { backend });
    const sent = execFileSync(
      process.execPath,
      [bundlePath, "send", session.id, "hello", "--state", stateDir, "--json"],
      { env, encoding: "utf8" },
    );
    const turnId = (JSON.parse(sent) as TurnRecord).id;
    let turn: TurnRecord | undefined;
    await waitUntil(
      async () => {
        turn = await client.request<TurnRecord>("GET", `/v1/turns/${turnId}`);
        return turn.phase === "failed";
      },
      30_000,
      `the ${backend} turn fails`,
    );
    expect(turn?.error?.code).toBe("cli_not_found");
    // The daemon's own PATH (npm start puts .tools/ in front of the one it was given).
    expect(turn?.error?.message).toContain(`no executable named "${backend}" on PATH (`);
    expect(turn?.error?.message).toContain(`${path})`);
    expect(turn?.error?.message).toContain("npm install -g");
  }
  // `npm run floot -- ...` prints the CLI's own output only (the build before it is quiet): JSON parses.
  const listed = execFileSync(
    process.execPath,
    [join(repoRoot, "scripts/bootstrap.mjs"), "floot", "session", "list", "--state", stateDir, "--json"],
    { cwd: repoRoot, env, encoding: "utf8" },
  );
  expect(JSON.parse(listed)).toMatchObject({ sessions: [expect.anything(), expect.anything()] });
  const status = await client.request<{ pid: number }>("GET", "/v1/status");
  expect(status.pid).toBe(file.pid);
  expect(bootstrap.child.exitCode).toBe(null);
  // npm start passes SIGTERM on to its daemon, which stops cleanly.
  process.kill(bootstrap.pid, "SIGTERM");
  expect((await bootstrap.exited).code).toBe(0);
  await waitUntil(() => !existsSync(`/proc/${file.pid}`), 10_000, "the daemon gone");
}, 300_000);

test("npm start on a terminal prints exactly one sign-in link there, and none to its log", async () => {
  root = mkdtempSync(join(tmpdir(), "floot-npm-start-tty-"));
  const stateDir = join(root, "state");
  const log = join(root, "daemon.log");
  const terminal = join(root, "terminal.txt");
  const env: NodeJS.ProcessEnv = { ...process.env, FLOOT_RUNTIME_DIR: join(root, "run") };
  delete env.FLOOT_STATE_DIR;
  // util-linux `script` gives npm start a controlling terminal (a pty) and records what reached it;
  // stderr, where the daemon logs, goes to a file as a service manager would send it.
  const quoted = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;
  const command = [
    "exec",
    quoted(process.execPath),
    quoted(join(repoRoot, "scripts/bootstrap.mjs")),
    "start --state",
    quoted(stateDir),
    "--port 0 2>",
    quoted(log),
  ].join(" ");
  const recorder = tracker.spawn("script", ["-q", "-f", "-e", "-c", command, terminal], {
    cwd: repoRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const daemonFile = join(stateDir, "daemon.json");
  await waitUntil(
    () => {
      if (recorder.child.exitCode !== null)
        throw new Error(`npm start exited:\n${readFileSync(log, "utf8")}`);
      return existsSync(daemonFile) && /#login=/.test(readFileSync(terminal, "utf8"));
    },
    240_000,
    "npm start's daemon ready and its link on the terminal",
  );
  const file = FlootDaemonFile.parse(JSON.parse(readFileSync(daemonFile, "utf8")));
  const links = readFileSync(terminal, "utf8").match(/http:\/\/127\.0\.0\.1:\d+\/#login=[A-Za-z0-9_-]{43}/g);
  expect(links).toHaveLength(1);
  expect(links![0]).toContain(`http://127.0.0.1:${file.port}/#login=`);
  const logged = readFileSync(log, "utf8");
  expect(logged).toContain("floot daemon listening");
  expect(logged).not.toContain("#login=");
  expect(logged).not.toContain(links![0]!.split("#login=")[1]);
  // Stopping the daemon ends npm start, and with it the recorder.
  process.kill(file.pid, "SIGTERM");
  expect((await recorder.exited).code).toBe(0);
  expect(readFileSync(terminal, "utf8").match(/#login=/g)).toHaveLength(1);
}, 300_000);
