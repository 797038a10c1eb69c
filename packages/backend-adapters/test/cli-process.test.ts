import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isProcessAlive, waitUntil } from "@bridgeworks/test-harness";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import {
  type CliProcessDeps,
  CliStartError,
  fenceProcess,
  isSameProcess,
  type ProcessIdentity,
  type RunningCli,
  startCliProcess,
  startSpawnerProcess,
} from "../src/index.js";

const started: RunningCli[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((cli) => cli.stop(200)));
});

// Every test runs on both spawners: Node's spawn in this process, and the helper process that keeps
// the spawn off a daemon's event loop (its dist/spawner-main.js, built by this suite's globalSetup).
const helper = startSpawnerProcess();
afterAll(() => helper.close());
const spawners: [string, CliProcessDeps][] = [
  ["in process", {}],
  ["spawner process", { spawner: helper }],
];

describe.each(spawners)("started %s", (_, deps) => {
  async function launch(script: string, hooks: Partial<Parameters<typeof startCliProcess>[1]> = {}) {
    const lines: string[] = [];
    const events: string[] = [];
    const cli = await startCliProcess(
      {
        command: "sh",
        args: ["-c", script],
        cwd: process.cwd(),
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      },
      {
        onSpawned: (identity) => events.push(`spawned ${identity.pid}`),
        onLine: (line) => {
          events.push(`line ${line}`);
          lines.push(line);
        },
        ...hooks,
      },
      deps,
    );
    started.push(cli);
    return { cli, lines, events };
  }

  describe("CLI process core", () => {
    test("records pid and start time before the first line is read", async () => {
      const { cli, events } = await launch("echo one; echo two");
      const exit = await cli.exited;
      expect(exit.code).toBe(0);
      expect(events).toEqual([`spawned ${cli.identity.pid}`, "line one", "line two"]);
      expect(cli.identity.startTime).toMatch(/^\d+$/);
    });

    test("keeps the tail of stderr for error messages", async () => {
      const { cli } = await launch("echo 'Error: Session ID x is already in use.' >&2; exit 1");
      expect(await cli.exited).toMatchObject({
        code: 1,
        stderrTail: "Error: Session ID x is already in use.\n",
      });
    });

    test("stop ends the whole process group, grandchildren included", async () => {
      const { cli, lines } = await launch("sleep 300 & echo $!; wait");
      await waitUntil(() => lines.length > 0, 5_000, "a line");
      const grandchild = Number(lines[0]);
      expect(isProcessAlive(grandchild)).toBe(true);
      await cli.stop(200);
      await waitUntil(() => !isProcessAlive(grandchild), 5_000, "the grandchild gone");
      expect(isSameProcess(cli.identity)).toBe(false);
    });
  });

  describe("a CLI that cannot run never takes its caller down", () => {
    const dirs: string[] = [];
    afterEach(() => {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    });
    const startOf =
      (command: string, env: Record<string, string>, cwd = process.cwd()) =>
      () =>
        startCliProcess(
          { command, args: [], cwd, env, installHint: "Install it with: npm install -g the-cli" },
          { onSpawned: () => {}, onLine: () => {} },
          deps,
        );
    // Node emits a failed spawn's `error` event on a later tick: an unheard one is an uncaught
    // exception in the caller (vitest reports it and fails the run). Give it that tick.
    const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

    test("a command on no PATH entry: cli_not_found naming the command, the PATH and how to install it", async () => {
      const start = startOf("floot-no-such-cli", { PATH: "/nonexistent/bin:/usr/bin" });
      await expect(start()).rejects.toThrow(CliStartError);
      await expect(start()).rejects.toThrow(
        expect.objectContaining({
          code: "cli_not_found",
          message:
            'floot-no-such-cli was not found: no executable named "floot-no-such-cli" on PATH ' +
            "(/nonexistent/bin:/usr/bin). Install it with: npm install -g the-cli",
        }),
      );
      await settle();
    });

    test("a file that may not be executed: cli_not_executable naming it", async () => {
      const dir = mkdtempSync(join(tmpdir(), "cli-"));
      dirs.push(dir);
      writeFileSync(join(dir, "the-cli"), "#!/bin/sh\necho hi\n");
      chmodSync(join(dir, "the-cli"), 0o644);
      await expect(startOf("the-cli", { PATH: dir })()).rejects.toThrow(
        expect.objectContaining({
          code: "cli_not_executable",
          message: expect.stringContaining(`${join(dir, "the-cli")} is not an executable file`),
        }),
      );
      await expect(startOf(join(dir, "missing"), { PATH: dir })()).rejects.toThrow(
        expect.objectContaining({
          code: "cli_not_found",
          message: expect.stringContaining("does not exist"),
        }),
      );
      await settle();
    });

    test("a working directory that is gone: cli_spawn_failed, and its spawn error is heard", async () => {
      await expect(
        startOf("sh", { PATH: process.env.PATH ?? "/bin" }, "/nonexistent/workspace")(),
      ).rejects.toThrow(
        expect.objectContaining({
          code: "cli_spawn_failed",
          message: expect.stringMatching(/^sh could not be started in \/nonexistent\/workspace \(.*ENOENT/),
        }),
      );
      await settle();
    });

    test("a 50 MB line: the lines before it are read, the process group is ended, the exit says why", async () => {
      const lines: string[] = [];
      const cli = await startCliProcess(
        {
          command: process.execPath,
          args: [
            "-e",
            'process.stdout.write("first\\n"); const chunk = "x".repeat(1 << 20); ' +
              "for (let i = 0; i < 50; i++) process.stdout.write(chunk); setInterval(() => {}, 1000);",
          ],
          cwd: process.cwd(),
          env: { PATH: process.env.PATH ?? "/bin" },
        },
        { onSpawned: () => {}, onLine: (line) => lines.push(line) },
        { ...deps, maxLineBytes: 4 * 1024 * 1024 },
      );
      started.push(cli);
      const exit = await cli.exited;
      expect(exit).toMatchObject({ signal: "SIGTERM", lineTooLong: { limitBytes: 4 * 1024 * 1024 } });
      expect(lines).toEqual(["first"]);
      expect(isSameProcess(cli.identity)).toBe(false);
    });
  });

  describe("fencing a leftover process", () => {
    test("terminates a process whose pid and start time match", async () => {
      const { cli, lines } = await launch("trap '' TERM; echo trapped; while :; do sleep 1; done");
      // TERM before the trap is set would end it at once.
      await waitUntil(() => lines.length > 0, 5_000, "a line");
      const outcome = await fenceProcess(cli.identity, { graceMs: 200 });
      expect(outcome).toBe("killed");
      expect((await cli.exited).signal).toBe("SIGKILL");
    });

    test("leaves alone a reused pid whose start time differs", async () => {
      const { cli } = await launch("sleep 300");
      const reused: ProcessIdentity = { pid: cli.identity.pid, startTime: "1" };
      expect(await fenceProcess(reused, { graceMs: 100 })).toBe("pid-reused");
      expect(isProcessAlive(cli.identity.pid)).toBe(true);
    });

    test("reports a process that is gone", async () => {
      const { cli } = await launch("exit 0");
      await cli.exited;
      expect(await fenceProcess(cli.identity)).toBe("not-running");
    });
  });

  describe("what the CLI started ends with it", () => {
    // A helper in its own process group, inside the CLI's session, holding the CLI's stdout: as codex
    // 0.171's sandbox fs-helper does. A process that left the session (setsid) is not the turn's.
    const leaver = `perl -e 'my $p = fork; if (!$p) { setpgrp(0, 0); exec "sleep", "300" } print "grouped $p\\n"'
      setsid sleep 300 </dev/null >/dev/null 2>&1 &
      # Until setsid has run: the child is in this session before it does.
      while [ "$(cut -d' ' -f6 /proc/$!/stat)" = "$$" ]; do sleep 0.05; done
      echo "own $!"`;

    test("a grouped-off child in the CLI's session is ended before the exit is told; one of its own session is left", async () => {
      const { cli, lines } = await launch(leaver);
      const exit = await cli.exited;
      expect(exit.code).toBe(0);
      const grouped = Number(lines.find((line) => line.startsWith("grouped "))?.slice(8));
      const own = Number(lines.find((line) => line.startsWith("own "))?.slice(4));
      try {
        expect(grouped).toBeGreaterThan(1);
        expect(isProcessAlive(grouped)).toBe(false);
        expect(isProcessAlive(own)).toBe(true);
      } finally {
        for (const pid of [grouped, own]) if (pid > 1 && isProcessAlive(pid)) process.kill(pid, "SIGKILL");
      }
    });
  });

  describe("recording the spawn", () => {
    test("a process whose identity could not be recorded is killed, and the error surfaces", async () => {
      let spawnedPid = 0;
      await expect(
        startCliProcess(
          { command: "sleep", args: ["300"], cwd: process.cwd(), env: { PATH: process.env.PATH ?? "/bin" } },
          {
            onSpawned: (identity) => {
              spawnedPid = identity.pid;
              throw new Error("journal unavailable");
            },
            onLine: () => {},
          },
          deps,
        ),
      ).rejects.toThrow("journal unavailable");
      await waitUntil(() => !isProcessAlive(spawnedPid), 5_000, "the process gone");
    });
  });

  describe("a CLI's priority", () => {
    /** Field 19 of /proc/<pid>/stat; the fields after the command name start at field 3. */
    const niceOf = (pid: number | "self") => {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
    };
    const autogroupOf = (pid: number | "self") => readFileSync(`/proc/${pid}/autogroup`, "utf8").trim();

    async function startNiced(nice?: number) {
      const lines: string[] = [];
      const cli = await startCliProcess(
        {
          command: "sh",
          // It starts its child only once its stdin is read, as a CLI reads its prompt first.
          args: ["-c", "read go; sleep 300 & echo $!; wait"],
          cwd: process.cwd(),
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
          stdin: "go\n",
          ...(nice !== undefined && { nice }),
        },
        { onSpawned: () => {}, onLine: (line) => lines.push(line) },
        deps,
      );
      started.push(cli);
      return { cli, lines };
    }

    test("the CLI, what it starts and its scheduling group run at the nice asked for; the caller's do not", async () => {
      const ownAutogroup = autogroupOf("self");
      const { cli, lines } = await startNiced(10);
      await waitUntil(() => lines.length > 0, 5_000, "a line");
      const child = Number(lines[0]);
      expect(niceOf(cli.identity.pid)).toBe(10);
      expect(niceOf(child)).toBe(10);
      expect(autogroupOf(cli.identity.pid)).toMatch(/ nice 10$/);
      // Its own session is its own group: lowering that one left the caller's as it was.
      expect(autogroupOf(cli.identity.pid)).not.toBe(ownAutogroup);
      expect(autogroupOf("self")).toBe(ownAutogroup);
      expect(niceOf("self")).toBe(0);
    });

    test("without a nice the CLI runs at the caller's priority", async () => {
      const { cli, lines } = await startNiced();
      await waitUntil(() => lines.length > 0, 5_000, "a line");
      expect(niceOf(cli.identity.pid)).toBe(niceOf("self"));
      expect(autogroupOf(cli.identity.pid)).toMatch(/ nice 0$/);
    });

    test("a nice outside 0-19 is refused before anything is spawned", async () => {
      for (const nice of [-1, 20, 2.5]) {
        let spawned = false;
        await expect(
          startCliProcess(
            {
              command: "true",
              args: [],
              cwd: process.cwd(),
              env: { PATH: process.env.PATH ?? "/bin" },
              nice,
            },
            { onSpawned: () => (spawned = true), onLine: () => {} },
            deps,
          ),
        ).rejects.toThrow(`nice must be an integer from 0 to 19, got ${nice}`);
        expect(spawned).toBe(false);
      }
    });
  });
});
