import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { repoRoot } from "./helpers.js";

const supervisePath = join(repoRoot, "scripts/supervise.mjs");
let root: string | undefined;
const pids: number[] = [];

afterEach(() => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

/** `scripts/supervise.mjs` running a child that writes its pid, then each signal it gets, to `log`. */
function startSupervisor(childExit: string) {
  root = mkdtempSync(join(tmpdir(), "supervise-"));
  const log = join(root, "child.log");
  const child = [
    `const { appendFileSync } = require("node:fs");`,
    `appendFileSync(${JSON.stringify(log)}, "pid " + process.pid + "\\n");`,
    `for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(s, () => {`,
    `  appendFileSync(${JSON.stringify(log)}, s + "\\n"); ${childExit}`,
    `});`,
    `setInterval(() => {}, 1000);`,
  ].join("\n");
  const script = [
    `import { supervise } from ${JSON.stringify(supervisePath)};`,
    `process.exitCode = await supervise("child", process.execPath, ["-e", ${JSON.stringify(child)}]);`,
  ].join("\n");
  const supervisor = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  pids.push(supervisor.pid!);
  let stderr = "";
  supervisor.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => supervisor.on("exit", (code) => resolve(code)));
  const readLog = () => {
    try {
      return readFileSync(log, "utf8");
    } catch {
      return "";
    }
  };
  return { supervisor, exited, readLog, stderr: () => stderr };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("scripts/supervise.mjs (npm start and npm test run their long-lived job through it)", () => {
  test.each(["SIGTERM", "SIGINT", "SIGHUP"] as const)(
    "%s sent to the script alone reaches the child, and the script exits as the child did",
    async (signal) => {
      const run = startSupervisor("process.exit(0);");
      await until(() => run.readLog().startsWith("pid "), "child started");
      const childPid = Number(/^pid (\d+)/.exec(run.readLog())![1]);
      pids.push(childPid);
      run.supervisor.kill(signal);
      expect(await run.exited).toBe(0);
      expect(run.readLog().split("\n")).toContain(signal);
      expect(() => process.kill(childPid, 0)).toThrow();
    },
  );

  test("the parent's death (npm killed by pid) ends the child too", async () => {
    root = mkdtempSync(join(tmpdir(), "supervise-"));
    const log = join(root, "child.log");
    const child = `require("node:fs").appendFileSync(${JSON.stringify(log)}, "pid " + process.pid + "\\n"); process.on("SIGTERM", () => { require("node:fs").appendFileSync(${JSON.stringify(log)}, "SIGTERM\\n"); process.exit(0); }); setInterval(() => {}, 1000);`;
    const script = `import { supervise } from ${JSON.stringify(supervisePath)}; process.exitCode = await supervise("child", process.execPath, ["-e", ${JSON.stringify(child)}], { parentCheckMs: 50 });`;
    // A stand-in for npm: it starts the script, reports its pid, and is then SIGKILLed.
    const parentScript = `const s = require("node:child_process").spawn(process.execPath, ["--input-type=module", "-e", ${JSON.stringify(script)}], { stdio: "ignore" }); console.log(s.pid); setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ["-e", parentScript], { stdio: ["ignore", "pipe", "inherit"] });
    pids.push(parent.pid!);
    const supervisorPid = await new Promise<number>((resolve) =>
      parent.stdout.setEncoding("utf8").once("data", (line: string) => resolve(Number(line.trim()))),
    );
    pids.push(supervisorPid);
    const readLog = () => {
      try {
        return readFileSync(log, "utf8");
      } catch {
        return "";
      }
    };
    await until(() => readLog().startsWith("pid "), "child started");
    const childPid = Number(/^pid (\d+)/.exec(readLog())![1]);
    pids.push(childPid);
    parent.kill("SIGKILL");
    await until(() => readLog().includes("SIGTERM"), "the child got SIGTERM");
    await until(() => !alive(childPid) && !alive(supervisorPid), "child and script gone");
  });

  test("a child that fails passes its code on, named in the message", async () => {
    const run = startSupervisor("process.exit(3);");
    await until(() => run.readLog().startsWith("pid "), "child started");
    pids.push(Number(/^pid (\d+)/.exec(run.readLog())![1]));
    run.supervisor.kill("SIGTERM");
    expect(await run.exited).toBe(3);
    expect(run.stderr()).toContain("bootstrap: child failed (exit 3)");
  });
});
