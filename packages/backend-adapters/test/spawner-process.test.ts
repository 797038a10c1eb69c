import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import {
  type RunningCli,
  type SpawnerProcess,
  type SpawnerProcessOptions,
  startCliProcess,
  startSpawnerProcess,
} from "../src/index.js";

// What only the helper process adds: every byte of the CLI's output reaches the caller although the
// helper created the pipes; a helper that dies loses no output and is started again; a caller that
// dies takes its helper with it.

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function spawner(options: SpawnerProcessOptions = {}): SpawnerProcess {
  const started = startSpawnerProcess(options);
  cleanups.push(() => started.close());
  return started;
}

async function run(helper: SpawnerProcess, script: string, lines: string[] = []): Promise<RunningCli> {
  const cli = await startCliProcess(
    { command: "sh", args: ["-c", script], cwd: process.cwd(), env },
    { onSpawned: () => {}, onLine: (line) => lines.push(line) },
    { spawner: helper },
  );
  cleanups.push(() => cli.stop(200));
  return cli;
}

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("the CLI spawner process", () => {
  test("output written at once, before the pipes reach the caller, arrives whole and in order", async () => {
    const helper = spawner();
    const lines: string[] = [];
    const cli = await run(helper, "seq 1 200000; echo err >&2", lines);
    const exit = await cli.exited;
    expect(exit).toMatchObject({ code: 0, signal: null, stderrTail: "err\n" });
    expect(lines).toHaveLength(200_000);
    expect(lines[0]).toBe("1");
    expect(lines.at(-1)).toBe("200000");
  });

  test("a CLI holds no descriptor of the helper's (its channel to the caller carries other turns' env)", async () => {
    // With the helper's channel among its descriptors, a turn's tool could read the next turn's spawn
    // request, tokens included.
    const helper = spawner();
    const lines: string[] = [];
    await run(
      helper,
      'for fd in /proc/$$/fd/*; do n=$(basename "$fd"); [ "$n" -gt 2 ] && readlink "$fd"; done; echo end; read wait',
      lines,
    );
    await waitUntil(() => lines.includes("end"), 10_000, "the CLI's descriptors listed");
    const helperSockets = readdirSync(`/proc/${helper.pid}/fd`)
      .map((fd) => readlinkSync(`/proc/${helper.pid}/fd/${fd}`))
      .filter((target) => target.startsWith("socket:"));
    expect(helperSockets.length).toBeGreaterThan(0);
    expect(lines.filter((target) => helperSockets.includes(target))).toEqual([]);
  });

  test("a helper that dies: its CLI's output still arrives, its exit reads unknown, the next spawn starts a new helper", async () => {
    const exits: (NodeJS.Signals | null)[] = [];
    const helper = spawner({ onUnexpectedExit: (_, signal) => exits.push(signal) });
    const lines: string[] = [];
    const cli = await run(helper, "read go; echo after-$go", lines);
    const first = helper.pid!;
    process.kill(first, "SIGKILL");
    await waitUntil(() => helper.pid === undefined, 10_000, "the spawner's exit noticed");
    expect(exits).toEqual(["SIGKILL"]);
    // The CLI outlived its helper and still reads its stdin and writes its stdout.
    expect(isRunning(cli.identity.pid)).toBe(true);
    const again = await run(helper, "echo second");
    expect(helper.pid).not.toBe(first);
    expect((await again.exited).code).toBe(0);
    // The first CLI is reaped by init now; its pipes still end when it does. (On a loaded machine it
    // may have ended already, its stdin closed with the helper: ESRCH then, and the same exit.)
    try {
      process.kill(cli.identity.pid, "SIGTERM");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
    const exit = await cli.exited;
    expect(exit).toMatchObject({ code: null, signal: null });
    expect(exit.stderrTail).toContain("the CLI spawner exited before this process");
  });

  test("the helper exits with the process that started it, SIGKILL included", async () => {
    const parent = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { startSpawnerProcess } from ${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)};
         const helper = startSpawnerProcess();
         helper.start();
         console.log(helper.pid);
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    cleanups.push(() => parent.kill("SIGKILL"));
    const helperPid = await new Promise<number>((resolve) =>
      parent.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
    );
    expect(isRunning(helperPid)).toBe(true);
    parent.kill("SIGKILL");
    await waitUntil(() => !isRunning(helperPid), 10_000, "the helper gone after its parent");
  });

  test("a spawn waiting for its answer keeps the caller running; an idle helper does not", async () => {
    const index = JSON.stringify(new URL("../dist/index.js", import.meta.url).href);
    const script =
      `import { startCliProcess, startSpawnerProcess } from ${index};` +
      "const helper = startSpawnerProcess();" +
      'const cli = await startCliProcess({ command: "true", args: [], cwd: "/", env: { PATH: "/usr/bin:/bin" } },' +
      "  { onSpawned() {}, onLine() {} }, { spawner: helper });" +
      'console.log("exit", (await cli.exited).code);';
    const caller = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    cleanups.push(() => caller.kill("SIGKILL"));
    let out = "";
    caller.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    // It exits by itself once the CLI is done: nothing of the helper holds it.
    const code = await new Promise((resolve) => caller.on("exit", resolve));
    expect({ code, out }).toEqual({ code: 0, out: "exit 0\n" });
  });

  test("a helper that answers out of protocol is ended, and the spawn fails naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "spawner-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const script = join(dir, "bogus-spawner.mjs");
    // Answers every request with a `spawned` that has no pid.
    writeFileSync(script, 'process.on("message", (m) => process.send({ type: "spawned", id: m.id }));\n');
    const exits: (NodeJS.Signals | null)[] = [];
    const helper = spawner({ script, onUnexpectedExit: (_, signal) => exits.push(signal) });
    await expect(run(helper, "echo never")).rejects.toThrow("could not be started in");
    expect(exits).toEqual(["SIGKILL"]);
  });

  test("a signal to the caller's process group leaves the helper to the caller, which closes it", async () => {
    const exits: unknown[] = [];
    const helper = spawner({ onUnexpectedExit: (...exit) => exits.push(exit) });
    helper.start();
    const pid = helper.pid!;
    // The helper is up once it answers.
    expect((await (await run(helper, "true")).exited).code).toBe(0);
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.kill(pid, signal);
    expect((await (await run(helper, "echo still")).exited).code).toBe(0);
    expect(helper.pid).toBe(pid);
    helper.close();
    await waitUntil(() => !isRunning(pid), 10_000, "the closed spawner's helper gone");
    expect(exits).toEqual([]);
  });

  test("a closed spawner starts nothing more, and its helper's exit is no surprise", async () => {
    const exits: unknown[] = [];
    const helper = spawner({ onUnexpectedExit: (...exit) => exits.push(exit) });
    helper.start();
    const pid = helper.pid!;
    helper.close();
    await expect(run(helper, "echo never")).rejects.toThrow("the CLI spawner was closed");
    await waitUntil(() => !isRunning(pid), 10_000, "the closed spawner's helper gone");
    expect(exits).toEqual([]);
  });
});
