import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { connect, type Socket } from "node:net";

/** Where a flood connects: a loopback TCP port or a unix socket. */
export type FloodTarget = { port: number } | { path: string };

export interface IdleFlood {
  /** Connections the server accepted and has not closed. */
  open(): number;
  /** Connections the server closed (or refused) so far. */
  closed(): number;
  readonly count: number;
  /** Closes every connection still open. Idempotent. */
  end(): void;
}

/**
 * `count` connections to `target` that never send a byte, opened `batch` at a time so the listen
 * backlog never overflows; resolves once each one is connected or already closed. The caller ends it
 * (`end`) after the test; the sockets count against this process's descriptors too.
 */
export async function idleFlood(target: FloodTarget, count: number, batch = 100): Promise<IdleFlood> {
  const sockets: Socket[] = [];
  let closed = 0;
  for (let started = 0; started < count; started += batch) {
    const size = Math.min(batch, count - started);
    await Promise.all(
      Array.from(
        { length: size },
        () =>
          new Promise<void>((resolve) => {
            const socket = "path" in target ? connect(target.path) : connect(target.port, "127.0.0.1");
            sockets.push(socket);
            socket.on("error", () => {});
            socket.once("connect", () => resolve());
            socket.once("close", () => {
              closed += 1;
              resolve();
            });
          }),
      ),
    );
  }
  return {
    count,
    open: () => count - closed,
    closed: () => closed,
    end() {
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** How many descriptors `pid` holds open (Linux, `/proc/<pid>/fd`). */
export function openDescriptors(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** A unix socket whose listen backlog is full: connects to it fail with EAGAIN until `release`. */
export interface FullBacklog {
  readonly path: string;
  /** Lets the listener run again: it accepts what waited and answers `{"pid":…}` to an HTTP request. */
  release(): void;
  /** Ends the listener (by pid) and the connections that filled its backlog. Idempotent. */
  end(): void;
}

const stoppableListener = `
const { createServer } = require("node:http");
createServer((request, response) => {
  response.setHeader("content-type", "application/json");
  response.end(JSON.stringify({ pid: process.pid }));
}).listen({ path: process.argv[1], backlog: 1 }, () => process.stdout.write("ready\\n"));
`;

/**
 * An HTTP listener at `path` in a child process stopped with SIGSTOP, its backlog of 1 filled by
 * connections that wait in it: what a server too busy to accept looks like to a client.
 */
export async function fullBacklog(path: string): Promise<FullBacklog> {
  const child = spawn(process.execPath, ["-e", stoppableListener, path], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const pid = child.pid as number;
  const fillers: Socket[] = [];
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    for (const socket of fillers) socket.destroy();
    try {
      process.kill(pid, "SIGCONT");
      process.kill(pid, "SIGKILL");
    } catch {}
  };
  try {
    await new Promise<void>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (code, signal) => reject(new Error(`the listener exited (${signal ?? code})`)));
      child.stdout?.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("ready")) resolve();
      });
    });
    process.kill(pid, "SIGSTOP");
    for (let attempt = 0; ; attempt += 1) {
      if (attempt === 64) throw new Error(`the stopped listener's backlog at ${path} never filled`);
      const refused = await new Promise<boolean>((resolve) => {
        const socket = connect(path);
        fillers.push(socket);
        socket.once("connect", () => resolve(false));
        socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "EAGAIN"));
      });
      if (refused) break;
    }
  } catch (error) {
    end();
    throw error;
  }
  return {
    path,
    release() {
      for (const socket of fillers) socket.destroy();
      process.kill(pid, "SIGCONT");
    },
    end,
  };
}
