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
