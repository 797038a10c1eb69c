import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PassThrough } from "node:stream";
import { FlootDaemonFile } from "@bridgeworks/protocol";
import { silentLogger } from "@bridgeworks/runtime";
import { afterEach, describe, expect, test } from "vitest";
import type { FlootContext } from "../src/cli/context.js";
import { runFloot } from "../src/cli/program.js";
import { type RunningDaemon, startDaemon } from "../src/daemon/daemon.js";

// The CLI reaches its daemon only over the unix socket daemon.json names, after checking the socket
// (and its dir, the state dir and daemon.json) are the user's own. The TCP port is the browser's.

let daemon: RunningDaemon | undefined;
let root: string | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

async function start(): Promise<{ stateDir: string; file: FlootDaemonFile }> {
  root = mkdtempSync(join(tmpdir(), "floot-socket-"));
  const stateDir = join(root, "state");
  daemon = await startDaemon({
    stateDir,
    env: { FLOOT_RUNTIME_DIR: join(root, "run"), PATH: process.env.PATH },
    logger: silentLogger,
  });
  return {
    stateDir,
    file: FlootDaemonFile.parse(JSON.parse(readFileSync(join(stateDir, "daemon.json"), "utf8"))),
  };
}

async function floot(...argv: string[]) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on("data", (chunk: Buffer) => out.push(chunk.toString()));
  stderr.on("data", (chunk: Buffer) => err.push(chunk.toString()));
  const context: FlootContext = {
    env: { HOME: root },
    cwd: root!,
    stdout,
    stderr,
    stdin: new PassThrough(),
    signals: process,
  };
  const code = await runFloot(argv, context);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

function overSocket(socketPath: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, headers: { host: "localhost" } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the API socket", () => {
  test("daemon.json names a 0600 socket in a 0700 runtime dir; it serves /v1 without a token, no UI", async () => {
    const { stateDir, file } = await start();
    expect(file.socket).toBe(join(root!, "run", file.socket.split("/").at(-2)!, "api.sock"));
    expect(lstatSync(file.socket).isSocket()).toBe(true);
    expect(statSync(file.socket).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file.socket)).mode & 0o777).toBe(0o700);
    const status = await overSocket(file.socket, "/v1/status");
    expect(status.status).toBe(200);
    expect(JSON.parse(status.body)).toMatchObject({ pid: process.pid, stateDir, port: file.port });
    expect((await overSocket(file.socket, "/")).status).toBe(404);
    expect((await overSocket(file.socket, "/login?code=x")).status).toBe(404);
  });

  test("floot session list talks to the socket and to no TCP port", async () => {
    const { stateDir, file } = await start();
    // daemon.json's port and token are left alone by the CLI: break both, the CLI still works.
    writeFileSync(
      join(stateDir, "daemon.json"),
      JSON.stringify({ ...file, port: 1, token: "0".repeat(64) }),
      { mode: 0o600 },
    );
    expect(await floot("session", "list", "--state", stateDir)).toEqual({
      code: 0,
      stdout: "no sessions\n",
      stderr: "",
    });
  });

  test.each([
    [
      "a socket dir open to others",
      "writable by group or others",
      (file: FlootDaemonFile) => chmodSync(dirname(file.socket), 0o777),
    ],
    [
      "a socket of another uid",
      "owned by uid 65534",
      (file: FlootDaemonFile) => execFileSync("chown", ["65534", file.socket]),
    ],
    [
      "a socket open to others",
      "open to group or others",
      (file: FlootDaemonFile) => chmodSync(file.socket, 0o666),
    ],
    [
      "a state dir open to others",
      "writable by group or others",
      (file: FlootDaemonFile, stateDir: string) => {
        void file;
        chmodSync(stateDir, 0o777);
      },
    ],
  ])("refuses %s, exit 1 naming the problem", async (_what, message, spoil) => {
    const { stateDir, file } = await start();
    spoil(file, stateDir);
    const result = await floot("session", "list", "--state", stateDir);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain("refusing");
  });
});
