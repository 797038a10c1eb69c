import { type ChildProcessWithoutNullStreams, execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FlootDaemonFile } from "@bridgeworks/protocol";
import { waitUntil } from "@bridgeworks/test-harness";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { appDir, stageBundleForOtherUsers, stageForOtherUsers } from "./daemon-harness.js";

// A hostile local user against the CLI side (issue 12, attacks 2 and 4). The victim's daemon and CLI
// run as a uid of their own (never root, so the owner checks bite as for any user), the attacker as
// nobody (65534); every step of either runs through setpriv as that uid, and the victim's runtime dir
// is the default one on the real /dev/shm (no FLOOT_RUNTIME_DIR, no XDG_RUNTIME_DIR).

const attacker = 65_534;
/** A uid no account has, per test run, so two runs never share /dev/shm/floot-<uid>. */
const victim = 61_000 + (process.pid % 4_000);
const sharedBase = `/dev/shm/floot-${victim}`;

let root: string;
let stateDir: string;
let home: string;
const children: ChildProcessWithoutNullStreams[] = [];

function removeSharedDirs(): void {
  for (const name of readdirSync("/dev/shm")) {
    if (name === basename(sharedBase) || name.startsWith(`${basename(sharedBase)}-`))
      rmSync(join("/dev/shm", name), { recursive: true, force: true });
  }
}

// The victim runs a copy of the bundle (the checkout may be out of its uid's reach), and on a desktop
// a browser stand-in as its xdg-open.
let victimBundle: ReturnType<typeof stageBundleForOtherUsers>;
let victimOpener: ReturnType<typeof stageForOtherUsers>;
beforeAll(() => {
  victimBundle = stageBundleForOtherUsers();
  victimOpener = stageForOtherUsers({ "bin/xdg-open": join(appDir, "test/hostile/xdg-open-recorder") });
});
afterAll(() => {
  victimBundle.remove();
  victimOpener.remove();
});

beforeEach(() => {
  removeSharedDirs();
  root = mkdtempSync(join(tmpdir(), "floot-hostile-"));
  chmodSync(root, 0o755);
  stateDir = join(root, "victim-state");
  home = join(root, "victim-home");
  for (const dir of [stateDir, home]) {
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, victim, victim);
  }
});

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid!, "SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  }
  removeSharedDirs();
  rmSync(root, { recursive: true, force: true });
});

function setpriv(uid: number): string[] {
  return ["--reuid", String(uid), "--regid", String(uid), "--clear-groups"];
}

/** A long-lived process as `uid`, ended by pid after the test. */
function spawnAs(uid: number, command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn("setpriv", [...setpriv(uid), command, ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: "pipe",
  });
  children.push(child);
  let stdout = Buffer.alloc(0);
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout = Buffer.concat([stdout, chunk])));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  return { child, stdout: () => stdout, stderr: () => stderr };
}

/** One command as `uid`, to its end. */
function runAs(
  uid: number,
  command: string,
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
) {
  const result = spawnSync("setpriv", [...setpriv(uid), command, ...args], {
    env: { PATH: process.env.PATH, ...options.env },
    input: options.input ?? "",
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const victimEnv = () => ({ HOME: home });
const flootAsVictim = (args: string[], input?: string) =>
  runAs(victim, process.execPath, [victimBundle.bundlePath, ...args, "--state", stateDir], {
    env: victimEnv(),
    ...(input !== undefined && { input }),
  });

function readDaemonFile(): FlootDaemonFile | undefined {
  try {
    return FlootDaemonFile.parse(JSON.parse(readFileSync(join(stateDir, "daemon.json"), "utf8")));
  } catch {
    return undefined;
  }
}

/** The victim's daemon (the built bundle, as the victim's uid, default runtime dir); resolves once ready. */
async function startVictimDaemon() {
  const daemon = spawnAs(
    victim,
    process.execPath,
    [victimBundle.bundlePath, "daemon", "--state", stateDir, "--port", "0"],
    victimEnv(),
  );
  await waitUntil(
    () => {
      if (daemon.child.exitCode !== null)
        throw new Error(`the victim's daemon exited (${daemon.child.exitCode}):\n${daemon.stderr()}`);
      return readDaemonFile()?.pid === daemon.child.pid;
    },
    60_000,
    "the victim's daemon ready",
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}\n${daemon.stderr()}`);
  });
  return { ...daemon, file: readDaemonFile()! };
}

async function killDaemon(daemon: { child: ChildProcessWithoutNullStreams }): Promise<void> {
  process.kill(daemon.child.pid!, "SIGKILL");
  if (daemon.child.exitCode === null && daemon.child.signalCode === null)
    await new Promise((resolve) => daemon.child.once("exit", resolve));
}

describe("attack 2: another user binds the dead daemon's port", () => {
  test("floot secret submit and every other command send it nothing: no connection, no byte", async () => {
    const daemon = await startVictimDaemon();
    const { port, token } = daemon.file;
    await killDaemon(daemon);

    // The attacker takes the port and answers like a daemon would, recording every byte it is sent.
    const listener = spawnAs(attacker, process.execPath, [
      "-e",
      `const net = require("node:net");
       net.createServer((c) => {
         process.stderr.write("connection\\n");
         c.on("data", (d) => {
           process.stdout.write(d);
           c.end('HTTP/1.1 200 OK\\r\\ncontent-type: application/json\\r\\ncontent-length: 2\\r\\nconnection: close\\r\\n\\r\\n{}');
         });
       }).listen(${port}, "127.0.0.1", () => process.stderr.write("listening\\n"));`,
    ]);
    await waitUntil(
      () => listener.stderr().includes("listening"),
      30_000,
      "the attacker listens on the port",
    );
    expect(runAs(attacker, "id", ["-u"]).stdout.trim()).toBe(String(attacker));

    const secret = `victim-secret-${randomBytes(12).toString("hex")}`;
    const submitted = flootAsVictim(["secret", "submit", "sr_attacked"], `${secret}\n`);
    const listed = flootAsVictim(["session", "list"]);
    const opened = flootAsVictim(["open", "--no-browser"]);
    // Give a late connection time to show up, then check the attacker got nothing at all.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const received = listener.stdout().toString("latin1");
    expect(received).not.toContain(secret);
    expect(received).not.toContain(token);
    expect(received).toBe("");
    expect(listener.stderr()).not.toContain("connection");
    // Each command failed, saying the daemon is not running (its socket is dead) and how to start one.
    for (const result of [submitted, listed, opened]) {
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain("is not reachable (connect ECONNREFUSED");
      expect(result.stderr).toContain("it is not running");
      expect(result.stderr).toContain("start one with: floot daemon");
    }

    // Nor can the attacker serve the victim's socket: its dir is the victim's, 0700.
    const squat = runAs(attacker, process.execPath, [
      "-e",
      `require("node:net").createServer().listen(${JSON.stringify(daemon.file.socket)}).on("error", (e) => { console.error(e.code); process.exit(3); });`,
    ]);
    expect(squat.code).toBe(3);
    expect(squat.stderr).toContain("EACCES");
  });
});

describe("attack 4: another user pre-creates the shared runtime dir", () => {
  test.each([
    ["a dir open to everyone (0777)", () => runAs(attacker, "mkdir", ["-m", "0777", sharedBase])],
    [
      "a symlink to a dir of the attacker's",
      () => {
        const target = join(root, "attacker-target");
        runAs(attacker, "mkdir", ["-m", "0777", target]);
        return runAs(attacker, "ln", ["-s", target, sharedBase]);
      },
    ],
  ])(
    "%s: the daemon and floot open use a fresh private dir; it can neither read nor swap what is in it, nor block a restart",
    async (_what, plant) => {
      expect(existsSync(dirname(sharedBase))).toBe(true);
      chmodSync(root, 0o777); // let the attacker create its symlink target beside the victim's dirs
      expect(plant().code).toBe(0);
      chmodSync(root, 0o755);
      const planted = lstatSync(sharedBase);
      expect(planted.uid).toBe(attacker);

      const first = await startVictimDaemon();
      const runtimeDir = dirname(first.file.socket);
      expect(runtimeDir.startsWith(`${sharedBase}-`)).toBe(true);
      const stats = lstatSync(runtimeDir);
      expect({ uid: stats.uid, mode: stats.mode & 0o777, symlink: stats.isSymbolicLink() }).toEqual({
        uid: victim,
        mode: 0o700,
        symlink: false,
      });
      expect(first.stderr()).toContain("runtime dir replaced by a fresh private one");
      expect(flootAsVictim(["session", "list"])).toMatchObject({ code: 0, stdout: "no sessions\n" });

      // floot open copes as the daemon does: the link on the terminal, and on a desktop the browser's
      // redirect page in the daemon's fresh dir, 0600.
      const plain = flootAsVictim(["open", "--no-browser"]);
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#login=\S+\n$/);
      const opened = join(home, "opened");
      const desktop = runAs(
        victim,
        process.execPath,
        [victimBundle.bundlePath, "open", "--state", stateDir],
        {
          env: {
            ...victimEnv(),
            DISPLAY: ":0",
            PATH: `${join(victimOpener.root, "bin")}:${process.env.PATH}`,
            FLOOT_TEST_OPENED: opened,
          },
        },
      );
      expect(desktop.code, desktop.stderr).toBe(0);
      const link = desktop.stdout.trim();
      await waitUntil(() => existsSync(opened), 30_000, "the browser stand-in read its page");
      const [pageUrl = "", ...page] = readFileSync(opened, "utf8").split("\n");
      const pagePath = fileURLToPath(pageUrl);
      expect(dirname(dirname(pagePath))).toBe(runtimeDir);
      expect(page.join("\n")).toContain(`url=${link}`);
      const pageStats = lstatSync(pagePath);
      expect({ uid: pageStats.uid, mode: pageStats.mode & 0o777 }).toEqual({ uid: victim, mode: 0o600 });
      const code = link.slice(link.indexOf("#login=") + "#login=".length);
      expect(runAs(attacker, "cat", [pagePath]).code).not.toBe(0);

      // Nothing of the victim's is in the attacker's dir (no code anywhere it can read), and the
      // attacker can neither list, swap nor add to the fresh one.
      const attackerDir = planted.isSymbolicLink() ? join(root, "attacker-target") : sharedBase;
      expect(readdirSync(attackerDir)).toEqual([]);
      expect(runAs(attacker, "grep", ["-rlsF", code, "/dev/shm", root]).stdout).toBe("");
      expect(runAs(attacker, "ls", [runtimeDir]).code).not.toBe(0);
      expect(runAs(attacker, "mv", [join(runtimeDir, "secrets"), join(attackerDir, "stolen")]).code).not.toBe(
        0,
      );
      expect(runAs(attacker, "mkdir", [join(runtimeDir, "evil")]).code).not.toBe(0);
      expect(existsSync(join(runtimeDir, "secrets"))).toBe(true);

      // A crash, then a restart: not blocked, a fresh dir again, the dead one's dir gone.
      await killDaemon(first);
      const second = await startVictimDaemon();
      expect(dirname(second.file.socket).startsWith(`${sharedBase}-`)).toBe(true);
      expect(existsSync(runtimeDir)).toBe(false);
      expect(flootAsVictim(["session", "list"])).toMatchObject({ code: 0, stdout: "no sessions\n" });
      execFileSync("kill", ["-TERM", String(second.child.pid)]);
      await new Promise((resolve) => second.child.once("exit", resolve));
      // A clean stop leaves no fresh dir behind.
      expect(existsSync(dirname(second.file.socket))).toBe(false);
    },
  );
});
