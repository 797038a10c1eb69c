import { randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, readdir, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { waitUntil, withTimeout } from "@bridgeworks/test-harness";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, test } from "vitest";
import {
  bridgeGenerationDir,
  McpMountError,
  type McpSocketEvent,
  maxSocketPathBytes,
  mcpSocketName,
  mintToken,
  removeStaleGenerations,
  startBridgeGeneration,
  startMcpSocketServer,
  TurnTokenRegistry,
} from "../src/index.js";
import { exited, socketHolder, useChildren, useTempDirs } from "./helpers.js";
import {
  connectSocketClient,
  echoProbe,
  echoServerFactory,
  initializeRequestLine,
  sendAndAwaitClose,
  type TurnContext,
  useMcpServers,
} from "./mcp-helpers.js";

const tempDir = useTempDirs();
const startServer = useMcpServers();
const track = useChildren();
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

async function modeOf(path: string): Promise<number> {
  return (await stat(path)).mode & 0o7777;
}

function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((part) => part.text ?? "").join("");
}

describe("startMcpSocketServer", () => {
  test("serves MCP to a connection that sends a live token first, with that turn's context", async () => {
    const dir = join(await tempDir(), "bridges", "g1");
    const { server, tokens, probe } = await startServer({ dir, generation: 1 });
    const tokenA = tokens.issue({ turnId: "turn-a" });
    const tokenB = tokens.issue({ turnId: "turn-b" });

    const clientA = await connectSocketClient(server.socketPath, tokenA);
    const clientB = await connectSocketClient(server.socketPath, tokenB);
    clients.push(clientA, clientB);

    const tools = await clientA.listTools();
    expect(tools.tools.map((tool) => tool.name)).toEqual(["echo", "slow"]);
    expect(textOf(await clientA.callTool({ name: "echo", arguments: { text: "hi" } }))).toBe(
      "echo(turn-a): hi",
    );
    expect(textOf(await clientB.callTool({ name: "echo", arguments: { text: "yo" } }))).toBe(
      "echo(turn-b): yo",
    );
    expect(probe.serversCreated).toEqual([{ turnId: "turn-a" }, { turnId: "turn-b" }]);
    expect(server.connectionCount()).toBe(2);
    expect(server.socketPath).toBe(join(dir, mcpSocketName));
    expect(server.generation).toBe(1);
  });

  test("works with the high-level McpServer too", async () => {
    const dir = join(await tempDir(), "g7");
    const tokens = new TurnTokenRegistry<TurnContext>(randomBytes);
    const server = await startMcpSocketServer<TurnContext>({
      dir,
      generation: 7,
      authorize: (token) => tokens.authorize(token),
      createServer: (context) => {
        const mcp = new McpServer({ name: "floot", version: "0.0.0" });
        mcp.registerTool("whoami", { description: "Names the turn." }, async () => ({
          content: [{ type: "text", text: context.turnId }],
        }));
        return mcp;
      },
    });
    try {
      const client = await connectSocketClient(server.socketPath, tokens.issue({ turnId: "turn-7" }));
      clients.push(client);
      expect(textOf(await client.callTool({ name: "whoami", arguments: {} }))).toBe("turn-7");
    } finally {
      await server.close();
    }
  });

  test.each([
    ["a wrong token", () => `${JSON.stringify({ token: mintToken(randomBytes) })}\n${initializeRequestLine}`],
    ["no token line at all (MCP straight away)", () => initializeRequestLine],
    ["a token line that is not JSON", () => `token ${mintToken(randomBytes)}\n${initializeRequestLine}`],
    ["a token that is not a string", () => `{"token": 42}\n${initializeRequestLine}`],
    ["an empty token", () => `{"token": ""}\n${initializeRequestLine}`],
  ])("%s: closed at once, no MCP served", async (_name, payload) => {
    const events: McpSocketEvent[] = [];
    const { server, tokens, probe } = await startServer({
      dir: join(await tempDir(), "g1"),
      generation: 1,
      onEvent: (event) => events.push(event),
    });
    tokens.issue({ turnId: "turn-a" });

    const exchange = await sendAndAwaitClose(server.socketPath, payload());

    expect(exchange.received).toBe("");
    expect(probe.serversCreated).toEqual([]);
    expect(server.connectionCount()).toBe(0);
    expect(events.filter((event) => event.type === "refused")).toHaveLength(1);
    expect(JSON.stringify(events)).not.toMatch(/[0-9a-f]{64}/);
  });

  test("a revoked token is refused", async () => {
    const { server, tokens, probe } = await startServer({ dir: join(await tempDir(), "g1"), generation: 1 });
    const token = tokens.issue({ turnId: "turn-a" });
    expect(tokens.revoke(token)).toBe(true);

    const exchange = await sendAndAwaitClose(server.socketPath, `${JSON.stringify({ token })}\n`);
    expect(exchange.received).toBe("");
    expect(probe.serversCreated).toEqual([]);
  });

  test("a connection that never sends its token line is closed after helloTimeoutMs", async () => {
    const { server, probe } = await startServer({
      dir: join(await tempDir(), "g1"),
      generation: 1,
      helloTimeoutMs: 200,
    });
    const exchange = await sendAndAwaitClose(server.socketPath, "", 5_000);
    expect(exchange.closedAfterMs).toBeGreaterThanOrEqual(150);
    expect(exchange.received).toBe("");
    expect(probe.serversCreated).toEqual([]);
  });

  test("an endless first line is closed without waiting for a newline", async () => {
    const { server, probe } = await startServer({ dir: join(await tempDir(), "g1"), generation: 1 });
    const exchange = await sendAndAwaitClose(server.socketPath, "x".repeat(4_096), 2_000);
    expect(exchange.received).toBe("");
    expect(probe.serversCreated).toEqual([]);
  });

  test("the dir is 0700 (even if it existed looser) and the socket 0600", async () => {
    const dir = join(await tempDir(), "g3");
    await mkdir(dir, { mode: 0o755 });
    await chmod(dir, 0o755);
    const { server } = await startServer({ dir, generation: 3 });
    expect(await modeOf(dir)).toBe(0o700);
    expect((await lstat(server.socketPath)).isSocket()).toBe(true);
    expect(await modeOf(server.socketPath)).toBe(0o600);
  });

  test("a socket path longer than sun_path takes is refused before anything is created", async () => {
    const root = await tempDir();
    const dir = join(root, "d".repeat(maxSocketPathBytes), "g1");
    const error = await startMcpSocketServer({
      dir,
      generation: 1,
      createServer: echoServerFactory(echoProbe()),
      authorize: () => undefined,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpMountError);
    expect(error).toMatchObject({ code: "socket_path_too_long" });
    expect((error as Error).message).toContain(`at most ${maxSocketPathBytes} bytes`);
    expect(await readdir(root)).toEqual([]);
  });

  test("a path of exactly the limit is accepted", async () => {
    const root = await tempDir();
    const filler = maxSocketPathBytes - Buffer.byteLength(join(root, "", "g1", mcpSocketName)) - 1;
    const dir = join(root, "p".repeat(filler), "g1");
    expect(Buffer.byteLength(join(dir, mcpSocketName))).toBe(maxSocketPathBytes);
    const { server, tokens } = await startServer({ dir, generation: 1 });
    const client = await connectSocketClient(server.socketPath, tokens.issue({ turnId: "long" }));
    clients.push(client);
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "ok" } }))).toBe("echo(long): ok");
  });

  test("refuses a generation that is not a positive integer", async () => {
    const dir = join(await tempDir(), "g0");
    for (const generation of [0, -1, 1.5, Number.NaN]) {
      await expect(
        startMcpSocketServer({
          dir,
          generation,
          createServer: echoServerFactory(echoProbe()),
          authorize: () => undefined,
        }),
      ).rejects.toMatchObject({ code: "invalid_generation" });
    }
  });

  test("replaces a socket file left by a dead server, refuses one a live server listens on", async () => {
    const dir = join(await tempDir(), "g1");
    await mkdir(dir, { mode: 0o700 });
    const socketPath = join(dir, mcpSocketName);
    // A server killed with SIGKILL leaves its socket file behind.
    const holder = await socketHolder(socketPath, track);

    const live = await startServer({ dir, generation: 1 }).catch((caught: unknown) => caught);
    expect(live).toMatchObject({ code: "socket_in_use" });

    holder.kill("SIGKILL");
    await exited(holder);
    expect((await lstat(socketPath)).isSocket()).toBe(true);

    const { server, tokens } = await startServer({ dir, generation: 1 });
    const client = await connectSocketClient(server.socketPath, tokens.issue({ turnId: "after" }));
    clients.push(client);
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "x" } }))).toBe("echo(after): x");
  });

  test("refuses to replace something at the socket path that is not a socket", async () => {
    const dir = join(await tempDir(), "g1");
    await mkdir(dir, { mode: 0o700 });
    await writeFile(join(dir, mcpSocketName), "not a socket");
    await expect(startServer({ dir, generation: 1 })).rejects.toMatchObject({ code: "not_a_socket" });
  });

  test("close() ends every connection: an in-flight call fails at once, its handler is aborted", async () => {
    const { server, tokens, probe } = await startServer({ dir: join(await tempDir(), "g1"), generation: 1 });
    const client = await connectSocketClient(server.socketPath, tokens.issue({ turnId: "turn-a" }));
    clients.push(client);
    const closed = new Promise<void>((resolve) => {
      client.onclose = () => resolve();
    });

    const call = client.callTool({ name: "slow", arguments: {} });
    const outcome = call.then(
      () => "resolved",
      (error: unknown) => `rejected: ${(error as Error).message}`,
    );
    await withTimeout(probe.slowStarted.promise, 5_000, () => "slow call started");
    const closedAt = Date.now();
    await server.close();

    expect(await withTimeout(outcome, 2_000, () => "in-flight call settled")).toMatch(
      /^rejected: .*Connection closed/,
    );
    await withTimeout(closed, 2_000, () => "client saw the close");
    await withTimeout(probe.slowAborted.promise, 2_000, () => "the handler's signal aborted");
    expect(Date.now() - closedAt).toBeLessThan(2_000);
    expect(server.connectionCount()).toBe(0);
    await expect(lstat(server.socketPath)).rejects.toMatchObject({ code: "ENOENT" });
    await server.close(); // idempotent
  });

  test("closeConnectionsOf(context) ends only that turn's connections; mcpConnectionsOf counts them", async () => {
    const { server, tokens } = await startServer({ dir: join(await tempDir(), "g1"), generation: 1 });
    const turnA = { turnId: "turn-a" };
    const turnB = { turnId: "turn-b" };
    const clientA = await connectSocketClient(server.socketPath, tokens.issue(turnA));
    const clientB = await connectSocketClient(server.socketPath, tokens.issue(turnB));
    clients.push(clientA, clientB);
    const closedA = new Promise<void>((resolve) => {
      clientA.onclose = () => resolve();
    });
    await clientA.listTools();
    expect(server.mcpConnectionsOf(turnA)).toBe(1);
    expect(server.mcpConnectionsOf({ turnId: "turn-a" })).toBe(0);

    expect(server.closeConnectionsOf(turnA)).toBe(1);
    await withTimeout(closedA, 2_000, () => "turn A's client closed");
    await waitUntil(() => server.mcpConnectionsOf(turnA) === 0, 2_000, "turn A's connection gone");
    expect(server.mcpConnectionsOf(turnB)).toBe(1);
    expect(textOf(await clientB.callTool({ name: "echo", arguments: { text: "still" } }))).toBe(
      "echo(turn-b): still",
    );
  });
});

describe("bridge generations", () => {
  test("bridgeGenerationDir is <bridges>/g<n>", () => {
    expect(bridgeGenerationDir("/state/bridges", 12)).toBe("/state/bridges/g12");
    expect(() => bridgeGenerationDir("/state/bridges", 0)).toThrow(McpMountError);
  });

  test("removeStaleGenerations removes older generation dirs only", async () => {
    const bridges = await tempDir();
    for (const name of ["g1", "g2", "g3", "g4", "gx", "notes", "g01"]) {
      await mkdir(join(bridges, name, "inner"), { recursive: true });
    }
    const outside = await tempDir();
    await writeFile(join(outside, "keep"), "keep");
    await symlink(outside, join(bridges, "g0"));
    await symlink(outside, join(bridges, "g2-link"));
    // A symlink named like an older generation is unlinked, never followed.
    await symlink(outside, join(bridges, "g5"));

    expect(await removeStaleGenerations(bridges, 3)).toEqual([1, 2]);
    expect((await readdir(bridges)).sort()).toEqual([
      "g0",
      "g01",
      "g2-link",
      "g3",
      "g4",
      "g5",
      "gx",
      "notes",
    ]);

    expect(await removeStaleGenerations(bridges, 6)).toEqual([3, 4, 5]);
    expect(await readdir(outside)).toEqual(["keep"]);
    expect(await removeStaleGenerations(join(bridges, "missing"), 2)).toEqual([]);
  });

  test("startBridgeGeneration serves g<n> and removes the older generations' dirs and sockets", async () => {
    const bridges = join(await tempDir(), "bridges");
    const probe = echoProbe();
    const tokens = new TurnTokenRegistry<TurnContext>(randomBytes);
    const common = {
      bridgesDir: bridges,
      createServer: echoServerFactory(probe),
      authorize: tokens.authorize.bind(tokens),
    };

    const first = await startBridgeGeneration({ ...common, generation: 1 });
    expect(first.removedGenerations).toEqual([]);
    // The first daemon dies without closing (its socket file stays), the next start bumps the generation.
    const second = await startBridgeGeneration({ ...common, generation: 2 });
    try {
      expect(second.removedGenerations).toEqual([1]);
      expect(await readdir(bridges)).toEqual(["g2"]);
      expect(await modeOf(bridges)).toBe(0o700);
      expect(second.server.socketPath).toBe(join(bridges, "g2", mcpSocketName));
      const client = await connectSocketClient(second.server.socketPath, tokens.issue({ turnId: "t2" }));
      clients.push(client);
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "new" } }))).toBe(
        "echo(t2): new",
      );
    } finally {
      await first.server.close();
      await second.server.close();
    }
  });

  test("startBridgeGeneration refuses a bridges dir too long for the socket before creating it", async () => {
    const root = await tempDir();
    await expect(
      startBridgeGeneration({
        bridgesDir: join(root, "b".repeat(120)),
        generation: 1,
        createServer: echoServerFactory(echoProbe()),
        authorize: () => undefined,
      }),
    ).rejects.toMatchObject({ code: "socket_path_too_long" });
    expect(await readdir(root)).toEqual([]);
  });
});

describe("TurnTokenRegistry", () => {
  test("issues distinct 64-hex tokens, authorizes them, revokes them", () => {
    const tokens = new TurnTokenRegistry<string>(randomBytes);
    const a = tokens.issue("a");
    const b = tokens.issue("b");
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
    expect(tokens.authorize(a)).toBe("a");
    expect(tokens.authorize(b)).toBe("b");
    expect(tokens.authorize(a.toUpperCase())).toBeUndefined();
    expect(tokens.authorize("")).toBeUndefined();
    expect(tokens.revoke(a)).toBe(true);
    expect(tokens.revoke(a)).toBe(false);
    expect(tokens.authorize(a)).toBeUndefined();
    expect(tokens.size).toBe(1);
  });
});
