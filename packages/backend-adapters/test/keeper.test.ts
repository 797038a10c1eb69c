import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isProcessAlive, waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import {
  connectKeeper,
  type KeeperClient,
  KeeperUnavailable,
  type KeptCliSink,
  type LinePosition,
  openKeeper,
  startCliProcess,
} from "../src/index.js";

// The CLI keeper (issue 31): a process of its own session that spawns a daemon's CLIs, keeps their
// stdout, and serves it to whichever daemon proves the key next, each line once from where that daemon
// asks. Its CLI here is `sh`; floot's restart tests run the real claude and codex through it.

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
let dir: string;
const keepers: number[] = [];
const clients: KeeperClient[] = [];

function places() {
  dir = mkdtempSync(join(tmpdir(), "keeper-"));
  chmodSync(dir, 0o700);
  const spoolDir = join(dir, "spool");
  mkdirSync(spoolDir, { mode: 0o700 });
  return { socketPath: join(dir, "keeper.sock"), key: randomBytes(32), spoolDir };
}

async function open(options: ReturnType<typeof places>, idleExitMs?: number): Promise<KeeperClient> {
  const client = await openKeeper({ ...options, ...(idleExitMs !== undefined && { idleExitMs }) });
  clients.push(client);
  if (!keepers.includes(client.pid)) keepers.push(client.pid);
  return client;
}

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const pid of keepers.splice(0)) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {}
    await waitUntil(() => !isProcessAlive(pid), 10_000, `keeper ${pid} gone`);
  }
  rmSync(dir, { recursive: true, force: true });
});

interface Heard {
  lines: { offset: number; text: string }[];
  exit?: { end: number; code: number | null; signal: string | null; stderrTail: string };
  overflow?: { offset: number; limit: number };
}

function sink(heard: Heard): KeptCliSink {
  return {
    line: (offset, text) => heard.lines.push({ offset, text }),
    overflow: (offset, limit) => {
      heard.overflow = { offset, limit };
    },
    exited: (exit) => {
      heard.exit = exit;
    },
  };
}

const spec = (script: string, stdin = "") => ({
  command: "sh",
  args: ["-c", script],
  cwd: tmpdir(),
  env,
  stdin,
});

describe("the CLI keeper", () => {
  test("runs a CLI, writes its stdin, and streams its lines with their byte offsets, then its exit", async () => {
    const keeper = await open(places());
    const started = await keeper.spawn(
      "t1",
      spec('read p; echo "got $p"; printf "two\\n\\nthree"; echo oops >&2; exit 3', "hello\n"),
    );
    expect(started.pid).toBeGreaterThan(1);
    const heard: Heard = { lines: [] };
    keeper.attach("t1", 0, sink(heard));
    await waitUntil(() => heard.exit !== undefined, 30_000, "the CLI's exit");
    expect(heard.lines).toEqual([
      { offset: 0, text: "got hello" },
      { offset: 10, text: "two" },
      { offset: 15, text: "three" },
    ]);
    expect(heard.exit).toEqual({ end: 20, code: 3, signal: null, stderrTail: "oops\n" });
    keeper.release("t1");
    await waitUntil(async () => (await keeper.list()).length === 0, 10_000, "released");
    expect(existsSync(join(dir, "spool", "t1.out"))).toBe(false);
  });

  test("a daemon that goes away leaves the CLI running; the next proves the key and reads on from its offset, each line once", async () => {
    const where = places();
    const first = await open(where);
    await first.spawn("t2", spec("for i in 1 2 3 4 5 6; do echo line-$i; sleep 0.3; done"));
    const before: Heard = { lines: [] };
    first.attach("t2", 0, sink(before));
    await waitUntil(() => before.lines.length >= 2, 30_000, "two lines");
    first.close();
    // What this daemon journaled: the first two lines. The next one starts where the third does.
    const from = before.lines[2]?.offset ?? before.lines[1]!.offset + before.lines[1]!.text.length + 1;
    const second = await open(where);
    expect(second.pid).toBe(first.pid);
    const after: Heard = { lines: [] };
    second.attach("t2", from, sink(after));
    await waitUntil(() => after.exit !== undefined, 30_000, "the exit, to the second daemon");
    expect([...before.lines.slice(0, 2), ...after.lines].map((each) => each.text)).toEqual(
      ["1", "2", "3", "4", "5", "6"].map((n) => `line-${n}`),
    );
    expect(after.exit).toMatchObject({ code: 0, end: 42 });
  });

  test("startCliProcess through the keeper: each line with where the next starts; an adopted CLI's journaled lines come again, marked replayed", async () => {
    const where = places();
    const first = await open(where);
    const heard: { text: string; position?: LinePosition }[] = [];
    let identity: { pid: number; startTime: string } | undefined;
    await startCliProcess(
      {
        command: "sh",
        args: ["-c", "for i in 1 2 3 4; do echo step-$i; sleep 0.3; done"],
        cwd: tmpdir(),
        env,
      },
      {
        onSpawned: (spawned) => {
          identity = spawned;
        },
        onLine: (text, position) => heard.push({ text, ...(position && { position }) }),
      },
      { kept: { keeper: first, id: "t5" } },
    );
    await waitUntil(() => heard.length >= 2, 30_000, "two lines");
    first.close();
    // The journal held the first two lines: the next daemon adopts the CLI from there.
    const through = heard[1]!.position!.next;
    const second = await open(where);
    const again: { text: string; replayed: boolean }[] = [];
    const adopted = await startCliProcess(
      { command: "sh", args: [], cwd: tmpdir(), env },
      {
        onSpawned: () => {
          throw new Error("an adopted CLI is not spawned again");
        },
        onLine: (text, position) => again.push({ text, replayed: position!.replayed }),
      },
      { kept: { keeper: second, id: "t5", adopt: { identity: identity!, through } } },
    );
    expect(adopted.identity).toEqual(identity);
    const exit = await adopted.exited;
    expect(exit.code).toBe(0);
    expect(again).toEqual([
      { text: "step-1", replayed: true },
      { text: "step-2", replayed: true },
      { text: "step-3", replayed: false },
      { text: "step-4", replayed: false },
    ]);
  });

  test("a child the CLI left in its session, in a process group of its own, ends before the exit is told", {
    timeout: 40_000,
  }, async () => {
    const keeper = await open(places());
    await keeper.spawn(
      "t9",
      spec(`perl -e 'my $p = fork; if (!$p) { setpgrp(0, 0); exec "sleep", "300" } print "grouped $p\\n"'`),
    );
    const heard: Heard = { lines: [] };
    keeper.attach("t9", 0, sink(heard));
    await waitUntil(() => heard.exit !== undefined, 30_000, "the CLI's exit");
    const grouped = Number(heard.lines[0]?.text.replace("grouped ", ""));
    try {
      expect(grouped).toBeGreaterThan(1);
      expect(isProcessAlive(grouped)).toBe(false);
    } finally {
      if (grouped > 1 && isProcessAlive(grouped)) process.kill(grouped, "SIGKILL");
    }
  });

  test("it lives in its own session, outliving the process that started it", async () => {
    const where = places();
    // A short-lived "daemon": starts the keeper, spawns a CLI, exits.
    const starter = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { openKeeper } from ${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)};
         const keeper = await openKeeper({ socketPath: ${JSON.stringify(where.socketPath)}, key: Buffer.from(${JSON.stringify(where.key.toString("hex"))}, "hex"), spoolDir: ${JSON.stringify(where.spoolDir)} });
         await keeper.spawn("t3", { command: "sh", args: ["-c", "sleep 2; echo late"], cwd: "/", env: { PATH: "/usr/bin:/bin" }, stdin: "" });
         console.log(keeper.pid); process.exit(0);`,
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(starter.status, starter.stderr).toBe(0);
    const keeperPid = Number(starter.stdout.trim());
    keepers.push(keeperPid);
    expect(isProcessAlive(keeperPid)).toBe(true);
    const stat = readFileSync(`/proc/${keeperPid}/stat`, "utf8");
    const session = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
    expect(session).toBe(keeperPid);
    const next = await open(where);
    const heard: Heard = { lines: [] };
    next.attach("t3", 0, sink(heard));
    await waitUntil(() => heard.exit !== undefined, 30_000, "the late line");
    expect(heard.lines.map((each) => each.text)).toEqual(["late"]);
    // Two node starts and a CLI: far past vitest's 5 s on a loaded machine (CI saw it, 2026-12-07).
  }, 60_000);

  test("another key, or a process that took the socket's name, gets nothing and is told so", async () => {
    const where = places();
    await open(where);
    await expect(connectKeeper(where.socketPath, randomBytes(32))).rejects.toThrow(KeeperUnavailable);
    // An impostor at another path answers with a proof it cannot make.
    const impostorPath = join(dir, "impostor.sock");
    const impostor = createServer((socket) => {
      socket.on("data", () =>
        socket.write(
          `${JSON.stringify({ type: "hello", version: 1, pid: 1, startTime: "1", proof: "A".repeat(43), nonce: "B".repeat(43) })}\n`,
        ),
      );
    });
    await new Promise<void>((resolve) => impostor.listen(impostorPath, resolve));
    await expect(connectKeeper(impostorPath, where.key)).rejects.toThrow(/could not prove/);
    await new Promise<void>((resolve) => impostor.close(() => resolve()));
  });

  test("a keeper of another protocol version at the socket is passed over with the reason said, and a new one starts", async () => {
    const where = places();
    // An older release's keeper: it answers with a version this build does not speak.
    const older = createServer((socket) => {
      socket.on("data", () =>
        socket.write(
          `${JSON.stringify({ type: "hello", version: 999, pid: 1, startTime: "1", proof: "A".repeat(43), nonce: "B".repeat(43) })}\n`,
        ),
      );
    });
    await new Promise<void>((resolve) => older.listen(where.socketPath, resolve));
    const reasons: string[] = [];
    try {
      const client = await openKeeper({ ...where, onPassedOver: (reason) => reasons.push(reason) });
      clients.push(client);
      keepers.push(client.pid);
      expect(reasons).toEqual([expect.stringMatching(/^the keeper speaks version 999, not \d+$/)]);
      expect(client.pid).not.toBe(process.pid);
    } finally {
      await new Promise<void>((resolve) => older.close(() => resolve()));
    }
    // Where no keeper was, nothing is said.
    const fresh = places();
    const quiet: string[] = [];
    const client = await openKeeper({ ...fresh, onPassedOver: (reason) => quiet.push(reason) });
    clients.push(client);
    keepers.push(client.pid);
    expect(quiet).toEqual([]);
  });

  test("a stdout line over the bound stops the CLI and is reported, the lines before it delivered", async () => {
    const where = places();
    const keeper = await open(where);
    await keeper.spawn("t4", spec("echo before; head -c 9000000 /dev/zero | tr '\\0' x; echo; sleep 30"));
    const heard: Heard = { lines: [] };
    keeper.attach("t4", 0, sink(heard));
    await waitUntil(() => heard.exit !== undefined, 60_000, "the stopped CLI's exit");
    expect(heard.lines.map((each) => each.text)).toEqual(["before"]);
    expect(heard.overflow).toEqual({ offset: 7, limit: 8 * 1024 * 1024 });
    expect(heard.exit?.signal).toBe("SIGKILL");
  });

  test("a keeper told to end gives up its name at once: the next daemon starts its own there, which stays", async () => {
    const where = places();
    const first = await open(where);
    const firstPid = first.pid;
    first.shutdown(0);
    // Within the ending keeper's grace period, the next daemon opens the keeper of the place.
    const second = await open(where);
    expect(second.pid).not.toBe(firstPid);
    await waitUntil(() => !isProcessAlive(firstPid), 15_000, "the first keeper exits");
    // The first one's end took nothing of the second's: its socket answers, and it runs a CLI.
    expect(existsSync(where.socketPath)).toBe(true);
    const started = await second.spawn("after", {
      command: "sh",
      args: ["-c", "echo still"],
      cwd: "/",
      env,
      stdin: "",
    });
    expect(isProcessAlive(second.pid)).toBe(true);
    expect(started.pid).toBeGreaterThan(0);
  });

  test("a keeper that starts removes the spools a dead keeper left (they may hold what a tool printed)", async () => {
    const where = places();
    const stale = join(where.spoolDir, "01a24ecc-53e7-71b0-8f91-687ddd2ed8db.out");
    writeFileSync(stale, '{"type":"assistant","text":"printed by a tool"}\n', { mode: 0o600 });
    await open(where);
    expect(existsSync(stale)).toBe(false);
  });

  test("with nothing kept and no daemon, it exits and removes its socket", async () => {
    const where = places();
    const keeper = await open(where, 500);
    const pid = keeper.pid;
    keeper.close();
    await waitUntil(() => !isProcessAlive(pid), 15_000, "the idle keeper exits");
    expect(existsSync(where.socketPath)).toBe(false);
  });
});
