import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { systemStartTimeReader } from "@bridgeworks/control-channel";
import { RunFile } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import {
  eventually,
  runBee,
  runClearHook,
  sessionStartInput,
  startBridge,
  startBridgeWithRunFile,
  startFakeClaude,
  useBridgeTestScope,
} from "./helpers.js";

const scope = useBridgeTestScope();

async function bridgeWithRunFile() {
  const { claude, running, runFilePath } = await startBridgeWithRunFile(scope.tracker, scope.sandbox);
  return { claude, running, runFile: runFilePath };
}

describe("shutdown", () => {
  test.each(["SIGINT", "SIGTERM", "SIGHUP"] as const)(
    "%s removes the run file before the process has exited, and it exits promptly",
    async (signal) => {
      const { running, runFile } = await bridgeWithRunFile();
      const sentAt = performance.now();
      process.kill(running.process.pid, signal);
      const exit = await running.process.exited;
      const exitedAfterMs = performance.now() - sentAt;
      expect(existsSync(runFile)).toBe(false);
      expect(exit.code).toBe(0);
      // Claude Code escalates to SIGTERM after 100 ms; the bench measures the exit time exactly.
      expect(exitedAfterMs).toBeLessThan(1000);
    },
  );

  test("stdin EOF ends the bridge and removes its run file", async () => {
    const { running, runFile } = await bridgeWithRunFile();
    running.process.child.stdin?.end();
    const exit = await running.process.exited;
    expect(exit.code).toBe(0);
    expect(existsSync(runFile)).toBe(false);
  });

  test("the death of the claude process ends the bridge and removes its run file", async () => {
    const { claude, running, runFile } = await bridgeWithRunFile();
    process.kill(claude.pid, "SIGKILL");
    const exit = await running.process.exited;
    expect(exit.code).toBe(0);
    expect(existsSync(runFile)).toBe(false);
  });

  test("the bridge departs its identity when it stops", async () => {
    const { running } = await bridgeWithRunFile();
    process.kill(running.process.pid, "SIGTERM");
    await running.process.exited;
    const agents = JSON.parse((await runBee(["agents", "--json"], scope.sandbox.env)).stdout) as Array<{
      status: string;
    }>;
    expect(agents.map((agent) => agent.status)).toEqual(["departed"]);
  });

  test("after a SIGKILL the hook refuses the dead bridge pid and the next bridge sweeps the stale file", async () => {
    const { claude, running, runFile } = await bridgeWithRunFile();
    process.kill(running.process.pid, "SIGKILL");
    await running.process.exited;
    expect(existsSync(runFile)).toBe(true);

    const hook = await runBee(
      ["hook", "session-start"],
      { ...scope.sandbox.env, CLAUDE_PID: String(claude.pid) },
      sessionStartInput("clear"),
    );
    expect(hook.code).toBe(0);
    expect(hook.stdout).toBe("");
    expect(hook.stderr).toMatch(/the bridge pid \d+ .* is not running \(a stale run file\); nothing retired/);

    process.kill(claude.pid, "SIGKILL");
    await claude.exited;
    const nextClaude = startFakeClaude(scope.tracker);
    await startBridge({
      tracker: scope.tracker,
      env: { ...scope.sandbox.env, BEE_AGENT: "beta", CLAUDE_PID: String(nextClaude.pid) },
    });
    await eventually(() => existsSync(join(scope.sandbox.runDir, `${nextClaude.pid}.json`)));
    expect(readdirSync(scope.sandbox.runDir)).toEqual([`${nextClaude.pid}.json`]);
  });

  test("without a claude ancestor the bridge serves, writes no run file and says so on stderr", async () => {
    const running = await startBridge({
      tracker: scope.tracker,
      env: { ...scope.sandbox.env, BEE_AGENT: "alpha" },
    });
    const { tools } = await running.client.listTools();
    expect(tools.length).toBe(10);
    await eventually(() => running.process.stderr().includes("no claude ancestor found"));
    expect(existsSync(scope.sandbox.runDir) ? readdirSync(scope.sandbox.runDir) : []).toEqual([]);
  });
});

describe("bee hook session-start", () => {
  test("exits 0 silently for startup, and refuses a dead claude pid before reading anything", async () => {
    const { claude } = await bridgeWithRunFile();
    const startup = await runBee(
      ["hook", "session-start"],
      { ...scope.sandbox.env, CLAUDE_PID: String(claude.pid) },
      sessionStartInput("startup"),
    );
    expect(startup).toEqual({ code: 0, stdout: "", stderr: "" });

    const dead = startFakeClaude(scope.tracker);
    process.kill(dead.pid, "SIGKILL");
    await dead.exited;
    const refused = await runBee(
      ["hook", "session-start"],
      { ...scope.sandbox.env, CLAUDE_PID: String(dead.pid) },
      "not even json",
    );
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain(`claude pid ${dead.pid} is not running`);
  });

  test("on clear it retires through /retire and prints the SessionStart output with the new identity", async () => {
    const { claude } = await bridgeWithRunFile();
    const hook = await runBee(
      ["hook", "session-start"],
      { ...scope.sandbox.env, CLAUDE_PID: String(claude.pid) },
      sessionStartInput("clear"),
    );
    expect(hook.code, hook.stderr).toBe(0);
    const output = JSON.parse(hook.stdout) as {
      hookSpecificOutput: { hookEventName: string; additionalContext: string };
    };
    expect(output.hookSpecificOutput.hookEventName).toBe("SessionStart");
    const agents = JSON.parse((await runBee(["agents", "--json"], scope.sandbox.env)).stdout) as Array<{
      identity: string;
      status: string;
    }>;
    expect(agents.map((agent) => agent.status)).toEqual(["retired", "active"]);
    expect(output.hookSpecificOutput.additionalContext).toContain(`bee identity: ${agents[1]!.identity}`);
  });

  test("the run file names the bridge by its pid and its start time", async () => {
    const { running, runFile } = await bridgeWithRunFile();
    const written = RunFile.parse(JSON.parse(readFileSync(runFile, "utf8")));
    expect(written.pid).toBe(running.process.pid);
    expect(written.startTime).toBe(systemStartTimeReader(running.process.pid));
  });

  test("a run file of an older bee (no start time) is treated as stale: nothing is sent, and stderr says why", async () => {
    const { claude, runFile } = await bridgeWithRunFile();
    const { startTime: _, ...legacy } = RunFile.parse(JSON.parse(readFileSync(runFile, "utf8")));
    writeFileSync(runFile, JSON.stringify(legacy));
    const hook = await runClearHook(scope.sandbox, claude.pid);
    expect(hook.code).toBe(0);
    expect(hook.stdout).toBe("");
    expect(hook.stderr).toContain(
      `run file ${runFile} was written by an older bee (it names no process start time), so its bridge cannot be told from a reused pid: treated as stale; nothing retired`,
    );
    const agents = JSON.parse((await runBee(["agents", "--json"], scope.sandbox.env)).stdout) as Array<{
      status: string;
    }>;
    expect(agents.map((agent) => agent.status)).toEqual(["active"]);
  });

  test("bad hook input is refused by name with exit 2", async () => {
    const claude = startFakeClaude(scope.tracker);
    const result = await runBee(
      ["hook", "session-start"],
      { ...scope.sandbox.env, CLAUDE_PID: String(claude.pid) },
      JSON.stringify({
        session_id: "s",
        transcript_path: "t",
        cwd: "/",
        hook_event_name: "SessionStart",
        source: "boot",
      }),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("source:");
    expect(result.stdout).toBe("");
  });
});
