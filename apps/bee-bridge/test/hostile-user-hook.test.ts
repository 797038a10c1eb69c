import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RunFile } from "@bridgeworks/protocol";
import type { TrackedProcess } from "@bridgeworks/test-harness";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runBee, runClearHook, startBridgeWithRunFile, useBridgeTestScope } from "./helpers.js";

// Issue 36: `bee hook session-start` with a stale run file, a reused pid and a port another local user
// holds. The bridge, its claude and the hook run as this test's uid; the other user (65534, through
// setpriv) runs test/hostile/retire-squatter.mjs, which reports every request it gets. Before the fix
// the hook sent the squatter `Authorization: Bearer <the bridge's token>`.

const attackerUid = "65534";
const scope = useBridgeTestScope();
// The attacker runs a copy: the checkout may be out of its uid's reach.
let staged: string;
beforeAll(() => {
  staged = mkdtempSync(join(tmpdir(), "bee-hostile-"));
  chmodSync(staged, 0o755);
  copyFileSync(
    new URL("./hostile/retire-squatter.mjs", import.meta.url),
    join(staged, "retire-squatter.mjs"),
  );
});
afterAll(() => rmSync(staged, { recursive: true, force: true }));

interface Squatter {
  process: TrackedProcess;
  port: number;
  /** Each request it received, as it reported it. */
  requests(): Array<{ method: string; headers: Record<string, string> }>;
}

/** The other user's squatter on `port` (0: any free one), ended with the test's processes. */
function spawnSquatter(port: number): TrackedProcess {
  return scope.tracker.spawn(
    "setpriv",
    [
      ...["--reuid", attackerUid, "--regid", attackerUid, "--clear-groups"],
      process.execPath,
      join(staged, "retire-squatter.mjs"),
      String(port),
    ],
    { cwd: "/", env: { PATH: "/usr/bin:/bin" }, stdio: ["ignore", "pipe", "pipe"] },
  );
}

/** Resolves once the squatter listens. */
async function squatting(squatter: TrackedProcess): Promise<Squatter> {
  await squatter.waitForOutput((out) => out.includes('"listening"'), 30_000);
  const lines = () =>
    squatter
      .stdout()
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const ready = lines()[0] as { listening: number; uid: number; pid: number };
  expect(ready.uid).toBe(Number(attackerUid));
  return {
    process: squatter,
    port: ready.listening,
    requests: () =>
      lines()
        .filter((line) => line.seen !== undefined)
        .map((line) => line.seen as { method: string; headers: Record<string, string> }),
  };
}

/**
 * The squatter under `pid`, a pid that has just died: the kernel gives a new process the pid after
 * `ns_last_pid` when it is free, so the test sets it and starts the squatter, again whenever another
 * process on the machine forked in between.
 */
async function squatUnderPid(pid: number, port: number): Promise<Squatter> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    writeFileSync("/proc/sys/kernel/ns_last_pid", String(pid - 1));
    const squatter = spawnSquatter(port);
    if (squatter.pid === pid) return squatting(squatter);
    process.kill(squatter.pid, "SIGKILL");
    await squatter.exited;
  }
  throw new Error(`could not start a process under the freed pid ${pid}`);
}

describe("a hostile local user against bee hook session-start", () => {
  test("a dead bridge's pid reused by the other user's process, which holds its port, gets no token and no request", async () => {
    const { claude, running, runFilePath } = await startBridgeWithRunFile(scope.tracker, scope.sandbox);
    const runFile = RunFile.parse(JSON.parse(readFileSync(runFilePath, "utf8")));
    // The bridge dies without removing its run file; its claude lives on.
    process.kill(running.process.pid, "SIGKILL");
    await running.process.exited;
    const squatter = await squatUnderPid(running.process.pid, runFile.port);
    expect(squatter.port).toBe(runFile.port);

    const hook = await runClearHook(scope.sandbox, claude.pid);

    expect(squatter.process.stdout()).not.toContain(runFile.token);
    expect(squatter.requests()).toEqual([]);
    expect(hook.stdout).toBe("");
    expect(hook.stderr).toContain(
      `the bridge pid ${runFile.pid} in ${runFilePath} now belongs to another process (a stale run file, the pid reused); nothing retired`,
    );
    expect(hook.code).toBe(0);
  });

  test("a port the other user holds gets a nonce and nothing else, even when the run file's process checks out", async () => {
    // The run file's process is the live bridge, yet its port is the squatter's: as after a pid reused
    // within the start time's resolution (a second, where only ps tells it), or any other way a hook
    // could be sent to the wrong port. Only the challenge can tell the squatter from the bridge.
    const { claude, runFilePath } = await startBridgeWithRunFile(scope.tracker, scope.sandbox);
    const runFile = RunFile.parse(JSON.parse(readFileSync(runFilePath, "utf8")));
    const squatter = await squatting(spawnSquatter(0));
    writeFileSync(runFilePath, JSON.stringify({ ...runFile, port: squatter.port }));

    const hook = await runClearHook(scope.sandbox, claude.pid);

    expect(squatter.process.stdout()).not.toContain(runFile.token);
    const requests = squatter.requests();
    expect(requests.map((request) => request.headers.authorization?.split(" ")[0])).toEqual([
      "Bee-Challenge",
    ]);
    expect(hook.stdout).toBe("");
    expect(hook.stderr).toContain(
      `what listens on port ${squatter.port} did not prove it is the bridge (its proof does not match the run file's token and process); the token was not sent; nothing retired`,
    );
    expect(hook.code).toBe(1);
    const agents = JSON.parse((await runBee(["agents", "--json"], scope.sandbox.env)).stdout) as Array<{
      status: string;
    }>;
    expect(agents.map((agent) => agent.status)).toEqual(["active"]);
  });
});
