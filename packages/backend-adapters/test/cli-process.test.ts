import { readFileSync } from "node:fs";
import { afterEach, describe, expect, test } from "vitest";
import {
  fenceProcess,
  isSameProcess,
  type ProcessIdentity,
  type RunningCli,
  startCliProcess,
} from "../src/index.js";

const started: RunningCli[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((cli) => cli.stop(200)));
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
}

function launch(script: string, hooks: Partial<Parameters<typeof startCliProcess>[1]> = {}) {
  const lines: string[] = [];
  const events: string[] = [];
  const cli = startCliProcess(
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
  );
  started.push(cli);
  return { cli, lines, events };
}

describe("CLI process core", () => {
  test("records pid and start time before the first line is read", async () => {
    const { cli, events } = launch("echo one; echo two");
    const exit = await cli.exited;
    expect(exit.code).toBe(0);
    expect(events).toEqual([`spawned ${cli.identity.pid}`, "line one", "line two"]);
    expect(cli.identity.startTime).toMatch(/^\d+$/);
  });

  test("keeps the tail of stderr for error messages", async () => {
    const { cli } = launch("echo 'Error: Session ID x is already in use.' >&2; exit 1");
    expect(await cli.exited).toMatchObject({
      code: 1,
      stderrTail: "Error: Session ID x is already in use.\n",
    });
  });

  test("stop ends the whole process group, grandchildren included", async () => {
    const { cli, lines } = launch("sleep 300 & echo $!; wait");
    await waitFor(() => lines.length > 0);
    const grandchild = Number(lines[0]);
    expect(isAlive(grandchild)).toBe(true);
    await cli.stop(200);
    await waitFor(() => !isAlive(grandchild));
    expect(isSameProcess(cli.identity)).toBe(false);
  });
});

describe("fencing a leftover process", () => {
  test("terminates a process whose pid and start time match", async () => {
    const { cli, lines } = launch("trap '' TERM; echo trapped; while :; do sleep 1; done");
    // TERM before the trap is set would end it at once.
    await waitFor(() => lines.length > 0);
    const outcome = await fenceProcess(cli.identity, { graceMs: 200 });
    expect(outcome).toBe("killed");
    expect((await cli.exited).signal).toBe("SIGKILL");
  });

  test("leaves alone a reused pid whose start time differs", async () => {
    const { cli } = launch("sleep 300");
    const reused: ProcessIdentity = { pid: cli.identity.pid, startTime: "1" };
    expect(await fenceProcess(reused, { graceMs: 100 })).toBe("pid-reused");
    expect(isAlive(cli.identity.pid)).toBe(true);
  });

  test("reports a process that is gone", async () => {
    const { cli } = launch("exit 0");
    await cli.exited;
    expect(await fenceProcess(cli.identity)).toBe("not-running");
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("recording the spawn", () => {
  test("a process whose identity could not be recorded is killed, and the error surfaces", async () => {
    let spawnedPid = 0;
    expect(() =>
      startCliProcess(
        { command: "sleep", args: ["300"], cwd: process.cwd(), env: { PATH: process.env.PATH ?? "/bin" } },
        {
          onSpawned: (identity) => {
            spawnedPid = identity.pid;
            throw new Error("journal unavailable");
          },
          onLine: () => {},
        },
      ),
    ).toThrow("journal unavailable");
    await waitFor(() => !isAlive(spawnedPid));
  });
});
