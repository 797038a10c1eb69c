import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import {
  challengeAuthorization,
  mintNonce,
  parseServerChallenge,
  retireAuthorization,
  retireMac,
} from "../src/index.js";

/** A fresh temp dir removed after the test. */
export function useTempDirs(): () => Promise<string> {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), "control-channel-"));
    dirs.push(dir);
    return dir;
  };
}

/** Processes killed by pid after each test. */
export function useChildren(): (child: ChildProcess) => ChildProcess {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
      }
    }
  });
  return (child) => {
    children.push(child);
    return child;
  };
}

export function spawnSleeper(): ChildProcess {
  return spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" });
}

/**
 * A process listening on the unix socket `socketPath`, started with `track` (so it is killed after the
 * test); resolves once it listens. Killing it with SIGKILL leaves the socket file behind.
 */
export async function socketHolder(
  socketPath: string,
  track: (child: ChildProcess) => ChildProcess,
): Promise<ChildProcess> {
  const holder = track(
    spawn(
      process.execPath,
      [
        "-e",
        `require("node:net").createServer().listen(${JSON.stringify(socketPath)}, () => console.log("up"))`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    ),
  );
  await new Promise<void>((resolve) => holder.stdout?.once("data", () => resolve()));
  return holder;
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** A pid that belonged to a process that has exited and been reaped. */
export async function deadPid(): Promise<number> {
  const child = spawnSleeper();
  const pid = child.pid!;
  child.kill("SIGKILL");
  await exited(child);
  return pid;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface SendOptions {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

/** One HTTP request with exactly the given headers (node adds no Host when one is given). */
export function send(port: number, options: SendOptions = {}): Promise<RawResponse> {
  const headers = { host: `127.0.0.1:${port}`, ...options.headers };
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method: options.method ?? "POST",
        path: options.path ?? "/retire",
        agent: false,
        headers,
        timeout: options.timeoutMs ?? 10_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(new Error("request timed out")));
    request.on("error", reject);
    request.end(options.body);
  });
}

/**
 * Asks the control server on `port` for a challenge and returns the `Authorization` of a retire that
 * answers it with `token` (the hook's side of the exchange, without checking the server's proof).
 */
export async function proveRetire(port: number, token: string): Promise<string> {
  const clientNonce = mintNonce(randomBytes);
  const answer = await send(port, { headers: { authorization: challengeAuthorization(clientNonce) } });
  const challenge = parseServerChallenge(String(answer.headers["www-authenticate"]));
  if (challenge === undefined) throw new Error(`no challenge in the answer: ${answer.status} ${answer.body}`);
  const { serverNonce } = challenge;
  return retireAuthorization(serverNonce, retireMac(token, { clientNonce, serverNonce, port }));
}

/** Sends raw bytes (for requests node's client will not build) and returns the status code. */
export function sendRaw(port: number, raw: string): Promise<{ status: number; head: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port }, () => socket.write(raw));
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("end", () => {
      const head = text.split("\r\n\r\n")[0] ?? "";
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, head });
    });
    socket.on("error", reject);
  });
}

export function corsHeaders(headers: IncomingHttpHeaders | string): string[] {
  const names =
    typeof headers === "string"
      ? headers.split("\r\n").map((line) => line.split(":")[0]!)
      : Object.keys(headers);
  return names.filter((name) => name.toLowerCase().startsWith("access-control-"));
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
