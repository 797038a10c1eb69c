import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { request } from "node:http";
import { promisify } from "node:util";
import { RunFile } from "@bridgeworks/protocol";
import Database from "better-sqlite3";
import { describe, expect, test } from "vitest";
import { eventually, runBee, startBridgeWithRunFile, useBridgeTestScope } from "./helpers.js";

const execFileAsync = promisify(execFile);
const scope = useBridgeTestScope();

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

async function bridgeWithRunFile() {
  const { claude, running, runFilePath } = await startBridgeWithRunFile(scope.tracker, scope.sandbox);
  const runFile = RunFile.parse(JSON.parse(readFileSync(runFilePath, "utf8")));
  return { claude, running, path: runFilePath, runFile };
}

function send(port: number, method: string, headers: Record<string, string>, body = ""): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: "127.0.0.1", port, method, path: "/retire", agent: false, setHost: false, headers },
      (response) => {
        response.resume();
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

const clearInput = JSON.stringify({
  session_id: "s-1",
  transcript_path: "/tmp/t.jsonl",
  cwd: "/tmp",
  hook_event_name: "SessionStart",
  source: "clear",
});

describe("the bridge's control channel", () => {
  test("refuses requests without the token, with a wrong one, from a browser or a rebound host, with no CORS header", async () => {
    const { runFile } = await bridgeWithRunFile();
    const host = `127.0.0.1:${runFile.port}`;
    const bearer = `Bearer ${runFile.token}`;
    const json = "application/json";
    const cases: Array<[string, string, Record<string, string>, number]> = [
      ["no token", "POST", { host, "content-type": json }, 401],
      [
        "a wrong token",
        "POST",
        { host, authorization: `Bearer ${"0".repeat(64)}`, "content-type": json },
        401,
      ],
      ["an Origin header", "POST", { host, authorization: bearer, origin: "https://evil.example" }, 403],
      ["a foreign Host", "POST", { host: `evil.example:${runFile.port}`, authorization: bearer }, 403],
      ["a text/plain simple POST", "POST", { host, "content-type": "text/plain" }, 401],
      [
        "a text/plain POST with the token",
        "POST",
        { host, authorization: bearer, "content-type": "text/plain" },
        415,
      ],
      [
        "an OPTIONS preflight",
        "OPTIONS",
        { host, origin: "https://evil.example", "access-control-request-method": "POST" },
        403,
      ],
      ["an OPTIONS without Origin", "OPTIONS", { host, authorization: bearer }, 405],
    ];
    for (const [what, method, headers, status] of cases) {
      const answer = await send(runFile.port, method, headers, method === "POST" ? "{}" : "");
      expect(answer.status, what).toBe(status);
      const cors = Object.keys(answer.headers).filter((name) => name.startsWith("access-control-"));
      expect(cors, what).toEqual([]);
    }
    const agents = JSON.parse((await runBee(["agents", "--json"], scope.sandbox.env)).stdout) as Array<{
      status: string;
    }>;
    expect(agents.map((agent) => agent.status)).toEqual(["active"]);
  });

  test("forces the run dir to 0700 and the run file to 0600 even when the dir existed with looser modes", async () => {
    mkdirSync(scope.sandbox.runDir, { recursive: true });
    chmodSync(scope.sandbox.runDir, 0o777);
    const { path } = await bridgeWithRunFile();
    expect(statSync(scope.sandbox.runDir).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  test("a retire that hangs answers 202 within 5 s, the token never shows in any argv, and shutdown is not blocked", async () => {
    const { claude, running, path, runFile } = await bridgeWithRunFile();
    await eventually(() => running.process.stderr().includes("identity registered"));
    // Another process holds the board's write lock, so the retire keeps waiting for it.
    const lock = new Database(scope.sandbox.board);
    lock.prepare("BEGIN IMMEDIATE").run();
    try {
      const started = performance.now();
      const hook = runBee(
        ["hook", "session-start"],
        { ...scope.sandbox.env, CLAUDE_PID: String(claude.pid) },
        clearInput,
      );
      let finished = false;
      void hook.then(() => {
        finished = true;
      });
      let samples = 0;
      while (!finished) {
        const { stdout } = await execFileAsync("ps", ["-eo", "args"], { encoding: "utf8" });
        expect(stdout.includes(runFile.token)).toBe(false);
        samples++;
      }
      const result = await hook;
      const tookMs = performance.now() - started;
      expect(samples).toBeGreaterThan(5);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain("still retiring");
      // The bridge answers 202 after 5 s; what must hold under any load is that the hook ends before
      // the 10 s timeout `bee setup claude` gives it (Claude Code kills it then). Speed is the bench's.
      expect(tookMs).toBeLessThan(10_000);

      const stoppedAt = performance.now();
      process.kill(running.process.pid, "SIGTERM");
      const exit = await running.process.exited;
      expect(exit.code).toBe(0);
      expect(existsSync(path)).toBe(false);
      // Not blocked by the retire still waiting for the lock (that wait has no end of its own).
      expect(performance.now() - stoppedAt).toBeLessThan(10_000);
    } finally {
      lock.prepare("COMMIT").run();
      lock.close();
    }
  });
});
