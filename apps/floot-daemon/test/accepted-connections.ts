import type { Server } from "node:http";
import { connect, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * `count` loopback connections to `server`, resolved once the server has accepted every one: requests
 * written on them together then reach it in the same poll for I/O. `track` gets each socket to destroy.
 */
export async function acceptedConnections(
  server: Server,
  count: number,
  track: (socket: Socket) => void,
): Promise<Socket[]> {
  const { port } = server.address() as { port: number };
  const sockets = Array.from({ length: count }, () => connect(port, "127.0.0.1"));
  for (const socket of sockets) track(socket);
  await Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once("connect", resolve))));
  const accepted = () => new Promise<number>((resolve) => server.getConnections((_, n) => resolve(n)));
  for (let waited = 0; (await accepted()) < count; waited += 10) {
    if (waited > 20_000) throw new Error(`the server did not accept ${count} connections within 20 s`);
    await sleep(10);
  }
  return sockets;
}
