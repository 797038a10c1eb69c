import { join } from "node:path";
import { withTimeout } from "@bridgeworks/test-harness";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { afterEach, describe, expect, test } from "vitest";
import { type Deferred, deferred, useTempDirs } from "./helpers.js";
import {
  connectSocketClient,
  echoProbe,
  echoServerFactory,
  openSocket,
  type TurnContext,
  useMcpServers,
} from "./mcp-helpers.js";

// An owner may load its MCP server with `import()` when the first client connects: `createServer`
// returns a promise, and the connection waits for it without losing a byte.
const tempDir = useTempDirs();
const startServer = useMcpServers();
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

/** A `createServer` whose servers are made only when the test says so; each one's `close` is seen. */
function lateServers() {
  const probe = echoProbe();
  const make = echoServerFactory(probe);
  const pending: Array<{ context: TurnContext; server: Deferred<Server> }> = [];
  const closed: TurnContext[] = [];
  const asked = deferred<void>();
  return {
    probe,
    closed,
    asked: asked.promise,
    createServer: (context: TurnContext) => {
      const server = deferred<Server>();
      pending.push({ context, server });
      asked.resolve();
      return server.promise;
    },
    /** Makes every server asked for so far. */
    release() {
      for (const { context, server } of pending.splice(0)) {
        const made = make(context);
        const close = made.close.bind(made);
        made.close = () => {
          closed.push(context);
          return close();
        };
        server.resolve(made);
      }
    },
  };
}

async function startLate() {
  const late = lateServers();
  const bridge = await startServer({
    dir: join(await tempDir(), "g1"),
    generation: 1,
    createServer: late.createServer,
  });
  return { late, ...bridge };
}

async function closedSoon(closed: TurnContext[]): Promise<void> {
  while (closed.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("a createServer that resolves later", () => {
  test("the client's first messages wait for it and are then served", async () => {
    const { late, server, tokens } = await startLate();
    let connected = false;
    const connecting = connectSocketClient(server.socketPath, tokens.issue({ turnId: "turn-a" })).then(
      (client) => {
        connected = true;
        clients.push(client);
        return client;
      },
    );
    await withTimeout(late.asked, 5_000, () => "createServer was called");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(connected).toBe(false);
    expect(server.connectionCount()).toBe(0);

    late.release();
    const client = await withTimeout(connecting, 5_000, () => "the client connected");
    const result = await client.callTool({ name: "echo", arguments: { text: "late" } });
    expect(result.content).toEqual([{ type: "text", text: "echo(turn-a): late" }]);
    expect(server.connectionCount()).toBe(1);
  });

  test("a connection gone before its server is made gets that server closed", async () => {
    const { late, server, tokens } = await startLate();
    const socket = await openSocket(server.socketPath);
    socket.write(`${JSON.stringify({ token: tokens.issue({ turnId: "turn-a" }) })}\n`);
    await withTimeout(late.asked, 5_000, () => "createServer was called");
    const gone = new Promise((resolve) => socket.once("close", resolve));
    socket.destroy();
    await gone;
    await new Promise((resolve) => setTimeout(resolve, 50));

    late.release();
    await withTimeout(closedSoon(late.closed), 5_000, () => "the late server was closed");
    expect(late.closed).toEqual([{ turnId: "turn-a" }]);
    expect(server.connectionCount()).toBe(0);
  });

  test("a server made after close() is closed, and its client's connection ends", async () => {
    const { late, server, tokens } = await startLate();
    const socket = await openSocket(server.socketPath);
    socket.on("error", () => {});
    const ended = new Promise((resolve) => socket.once("close", resolve));
    socket.write(`${JSON.stringify({ token: tokens.issue({ turnId: "turn-a" }) })}\n`);
    await withTimeout(late.asked, 5_000, () => "createServer was called");

    await server.close();
    await withTimeout(ended, 5_000, () => "the connection ended");
    late.release();
    await withTimeout(closedSoon(late.closed), 5_000, () => "the late server was closed");
    expect(late.probe.calls).toEqual([]);
  });
});
