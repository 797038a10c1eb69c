import { createServer as createHttpServer, type Server as HttpServer, type RequestListener } from "node:http";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import {
  type ConnectionLimiter,
  type ConnectionLimits,
  type HttpConnectionLimits,
  type IdleCloseReason,
  limitConnections,
  limitHttpConnections,
} from "../src/index.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/**
 * An echo server whose connections are engaged by their first line ("work\n", answered "ok\n") until
 * they send "done\n": the way an owner marks work in progress.
 */
async function echoServer(limits: ConnectionLimits) {
  const closes: IdleCloseReason[] = [];
  let limiter!: ConnectionLimiter;
  const server: Server = createServer((socket) => {
    socket.setEncoding("utf8");
    socket.on("error", () => {});
    socket.on("data", (text: string) => {
      if (text.includes("work")) {
        limiter.engage(socket);
        socket.write("ok\n");
      }
      if (text.includes("done")) limiter.release(socket);
    });
  });
  limiter = limitConnections(server, limits, { onIdleClose: (_, reason) => closes.push(reason) });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => server.close());
  return { port: (server.address() as AddressInfo).port, limiter, closes };
}

interface Client {
  socket: Socket;
  closed: () => boolean;
  /** Sends `line` and resolves with the next line the server writes. */
  ask(line: string): Promise<string>;
}

async function client(port: number): Promise<Client> {
  const socket = connect(port, "127.0.0.1");
  cleanups.push(() => socket.destroy());
  let closed = false;
  socket.on("error", () => {});
  socket.once("close", () => {
    closed = true;
  });
  socket.setEncoding("utf8");
  await new Promise<void>((resolve) => {
    socket.once("connect", () => resolve());
    socket.once("close", () => resolve());
  });
  return {
    socket,
    closed: () => closed,
    ask: (line) =>
      new Promise((resolve, reject) => {
        socket.once("data", (text: string) => resolve(text.trim()));
        socket.once("close", () => reject(new Error("closed")));
        socket.write(`${line}\n`);
      }),
  };
}

describe("limitConnections", { timeout: 30_000 }, () => {
  test("a connection beyond maxConnections is closed at once; the ones already open keep working", async () => {
    const { port, limiter } = await echoServer({
      maxConnections: 4,
      maxIdleConnections: 2,
      idleTimeoutMs: 60_000,
    });
    const working = [await client(port), await client(port)];
    for (const each of working) expect(await each.ask("work")).toBe("ok");
    const idle = [await client(port), await client(port)];
    await waitUntil(() => limiter.counts().open === 4, 10_000, "four connections accepted");

    const beyond = await client(port);
    await waitUntil(beyond.closed, 10_000, "the fifth connection closed");
    expect(limiter.counts()).toEqual({ open: 4, idle: 2 });
    for (const each of working) expect(await each.ask("work")).toBe("ok");
    expect(idle.map((each) => each.closed())).toEqual([false, false]);
  });

  test("a new connection beyond maxIdleConnections closes the oldest idle one, never one at work", async () => {
    const { port, limiter, closes } = await echoServer({
      maxConnections: 10,
      maxIdleConnections: 2,
      idleTimeoutMs: 60_000,
    });
    const working = await client(port);
    expect(await working.ask("work")).toBe("ok");
    const oldest = await client(port);
    const older = await client(port);
    await waitUntil(() => limiter.counts().idle === 2, 10_000, "two idle");
    const newest = await client(port);
    await waitUntil(oldest.closed, 10_000, "the oldest idle connection closed");
    expect(closes).toEqual(["evicted"]);
    expect([older.closed(), newest.closed(), working.closed()]).toEqual([false, false, false]);
    expect(await newest.ask("work")).toBe("ok");
    expect(await working.ask("work")).toBe("ok");
  });

  test("an idle connection is closed after idleTimeoutMs; one at work is not, however quiet, until its work ends", async () => {
    const idleTimeoutMs = 300;
    const { port, closes } = await echoServer({ maxConnections: 10, maxIdleConnections: 5, idleTimeoutMs });
    const silent = await client(port);
    const working = await client(port);
    expect(await working.ask("work")).toBe("ok");
    await waitUntil(silent.closed, 10_000, "the silent connection closed");
    expect(closes).toEqual(["idle-timeout"]);
    // Quiet for several idle timeouts, yet at work: still open.
    await sleep(idleTimeoutMs * 4);
    expect(working.closed()).toBe(false);
    expect(await working.ask("work")).toBe("ok");
    working.socket.write("done\n");
    working.socket.write("done\n");
    await waitUntil(working.closed, 10_000, "the connection closed once its work ended");
  });

  test("limits that would let idle connections take every slot, or are no positive integers, are refused by name", () => {
    const server = createServer();
    expect(() =>
      limitConnections(server, { maxConnections: 4, maxIdleConnections: 4, idleTimeoutMs: 1 }),
    ).toThrow("maxIdleConnections (4) must be below maxConnections (4)");
    expect(() =>
      limitConnections(server, { maxConnections: 4, maxIdleConnections: 1, idleTimeoutMs: 0 }),
    ).toThrow("idleTimeoutMs must be a positive integer, got 0");
    expect(() =>
      limitConnections(server, { maxConnections: 1.5, maxIdleConnections: 1, idleTimeoutMs: 1 }),
    ).toThrow("maxConnections must be a positive integer, got 1.5");
  });
});

describe("limitHttpConnections", { timeout: 30_000 }, () => {
  async function httpServer(handler: RequestListener, overrides: Partial<HttpConnectionLimits> = {}) {
    const server: HttpServer = createHttpServer(handler);
    const limiter = limitHttpConnections(server, {
      maxConnections: 10,
      maxIdleConnections: 5,
      idleTimeoutMs: 300,
      headersTimeoutMs: 1_000,
      requestTimeoutMs: 2_000,
      ...overrides,
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => {
      server.closeAllConnections();
      server.close();
    });
    return { port: (server.address() as AddressInfo).port, limiter, server };
  }

  test("a response in progress keeps its connection however quiet (an SSE stream); after it, the connection is idle", async () => {
    let finish = () => {};
    const { port, limiter, server } = await httpServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(": open\n\n");
      finish = () => response.end("data: bye\n\n");
    });
    expect(server.headersTimeout).toBe(1_000);
    expect(server.requestTimeout).toBe(2_000);
    const stream = await client(port);
    const first = await stream.ask("GET /events HTTP/1.1\r\nHost: x\r\n\r");
    expect(first).toContain("200 OK");
    await sleep(300 * 4);
    expect(stream.closed()).toBe(false);
    expect(limiter.counts()).toEqual({ open: 1, idle: 0 });
    finish();
    await waitUntil(() => limiter.counts().idle === 1, 10_000, "the connection idle once its response ended");
    await waitUntil(stream.closed, 10_000, "the idle connection closed");
  });

  test("a connection that sends its headers byte by byte is closed as idle, never answered", async () => {
    let requests = 0;
    // Node's own header timeout set far out: only the idle clock can end it.
    const slowHeaders = { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 };
    const { port } = await httpServer((_request, response) => {
      requests += 1;
      response.end("ok");
    }, slowHeaders);
    const slow = await client(port);
    let received = "";
    slow.socket.on("data", (text: string) => {
      received += text;
    });
    const header = "GET / HTTP/1.1\r\nHost: x\r\nX-Padding: ";
    for (let index = 0; !slow.closed() && index < 200; index += 1) {
      slow.socket.write(header[index] ?? "a");
      await sleep(20);
    }
    await waitUntil(slow.closed, 10_000, "the slow connection closed");
    expect(requests).toBe(0);
    expect(received).toBe("");
  });
});
