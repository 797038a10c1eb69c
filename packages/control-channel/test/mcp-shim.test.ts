import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { waitUntil, withTimeout } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import {
  mcpSocketName,
  mintToken,
  removeStaleGenerations,
  runShim,
  ShimExitCode,
  startBridgeGeneration,
  TurnTokenRegistry,
} from "../src/index.js";
import { deferred, exited, socketHolder, useChildren, useTempDirs } from "./helpers.js";
import { echoProbe, echoServerFactory, type TurnContext } from "./mcp-helpers.js";

const tempDir = useTempDirs();
const track = useChildren();
const rawServers: Server[] = [];
const rawSockets: Socket[] = [];
const shims: ShimRun[] = [];
afterEach(async () => {
  for (const shim of shims.splice(0)) shim.stdin.end();
  for (const socket of rawSockets.splice(0)) socket.destroy();
  for (const server of rawServers.splice(0)) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

interface ShimRun {
  stdin: PassThrough;
  stdout: PassThrough;
  stdoutText: () => string;
  stderrText: () => string;
  exitCodes: number[];
  done: Promise<ShimExitCode>;
  startedAt: number;
}

function startShim(socketPath: string | undefined, token: string | undefined): ShimRun {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  const exitCodes: number[] = [];
  const startedAt = Date.now();
  const done = runShim({ socketPath, token, stdin, stdout, stderr, exit: (code) => exitCodes.push(code) });
  const run = { stdin, stdout, stdoutText: () => out, stderrText: () => err, exitCodes, done, startedAt };
  shims.push(run);
  return run;
}

/** A raw unix socket server that records what each connection sent. */
async function rawServer(
  socketPath: string,
): Promise<{ connections: Promise<Socket>; received: () => string }> {
  const connection = deferred<Socket>();
  let received = "";
  const server = createServer((socket) => {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      received += chunk;
    });
    socket.on("error", () => {});
    rawSockets.push(socket);
    connection.resolve(socket);
  });
  rawServers.push(server);
  await new Promise<void>((resolve) => server.listen(socketPath, () => resolve()));
  return { connections: connection.promise, received: () => received };
}

describe("runShim", () => {
  test("a missing socket: exits non-zero at once, nothing on stdout, no token on stderr", async () => {
    const token = mintToken(randomBytes);
    const shim = startShim(join(await tempDir(), "g1", mcpSocketName), token);
    expect(await withTimeout(shim.done, 2_000, () => "shim exit")).toBe(ShimExitCode.bridgeUnavailable);
    expect(Date.now() - shim.startedAt).toBeLessThan(1_000);
    expect(shim.exitCodes).toEqual([ShimExitCode.bridgeUnavailable]);
    expect(shim.stdoutText()).toBe("");
    expect(shim.stderrText()).toContain("ENOENT");
    expect(shim.stderrText()).not.toContain(token);
  });

  test("a refused socket (file left by a killed server): exits non-zero at once", async () => {
    const socketPath = join(await tempDir(), mcpSocketName);
    const holder = await socketHolder(socketPath, track);
    holder.kill("SIGKILL");
    await exited(holder);

    const shim = startShim(socketPath, mintToken(randomBytes));
    expect(await withTimeout(shim.done, 2_000, () => "shim exit")).toBe(ShimExitCode.bridgeUnavailable);
    expect(shim.stderrText()).toContain("ECONNREFUSED");
    expect(shim.stdoutText()).toBe("");
  });

  test("missing environment: exits with the usage code, naming the variables", async () => {
    const shim = startShim(undefined, undefined);
    expect(await shim.done).toBe(ShimExitCode.usage);
    expect(shim.stderrText()).toContain("FLOOT_MCP_SOCKET");
    expect(shim.stderrText()).toContain("FLOOT_MCP_TOKEN");
    expect(shim.stdoutText()).toBe("");
  });

  test("sends the token line first, then relays both ways byte for byte", async () => {
    const socketPath = join(await tempDir(), mcpSocketName);
    const bridge = await rawServer(socketPath);
    const token = mintToken(randomBytes);
    const shim = startShim(socketPath, token);
    const connection = await withTimeout(bridge.connections, 2_000, () => "shim connected");

    shim.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await waitUntil(() => bridge.received().includes("ping"), 2_000, "request relayed");
    expect(bridge.received()).toBe(`{"token":"${token}"}\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n`);

    connection.write('{"jsonrpc":"2.0","id":1,"result":{}}\n');
    await waitUntil(() => shim.stdoutText().length > 0, 2_000, "response relayed");
    expect(shim.stdoutText()).toBe('{"jsonrpc":"2.0","id":1,"result":{}}\n');
    expect(shim.exitCodes).toEqual([]);
  });

  test("the socket closing mid-session: exits non-zero at once", async () => {
    const socketPath = join(await tempDir(), mcpSocketName);
    const bridge = await rawServer(socketPath);
    const shim = startShim(socketPath, mintToken(randomBytes));
    const connection = await withTimeout(bridge.connections, 2_000, () => "shim connected");
    shim.stdin.write('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}\n');
    await waitUntil(() => bridge.received().includes("tools/call"), 2_000, "call relayed");

    const closedAt = Date.now();
    connection.destroy();
    expect(await withTimeout(shim.done, 2_000, () => "shim exit")).toBe(ShimExitCode.bridgeClosed);
    expect(Date.now() - closedAt).toBeLessThan(1_000);
    expect(shim.stdoutText()).toBe("");
  });

  test("stdin ending: exits 0 and the bridge sees EOF", async () => {
    const socketPath = join(await tempDir(), mcpSocketName);
    const bridge = await rawServer(socketPath);
    const shim = startShim(socketPath, mintToken(randomBytes));
    const connection = await withTimeout(bridge.connections, 2_000, () => "shim connected");
    const bridgeSawEnd = new Promise<void>((resolve) => connection.once("end", () => resolve()));

    shim.stdin.end();
    expect(await withTimeout(shim.done, 2_000, () => "shim exit")).toBe(ShimExitCode.clientClosed);
    await withTimeout(bridgeSawEnd, 2_000, () => "bridge saw EOF");
  });

  test("a shim mounted on an older generation exits non-zero within 2 s after a restart", async () => {
    const bridgesDir = join(await tempDir(), "bridges");
    await mkdir(bridgesDir, { recursive: true });
    const tokens = new TurnTokenRegistry<TurnContext>(randomBytes);
    const common = {
      bridgesDir,
      createServer: echoServerFactory(echoProbe()),
      authorize: (token: string) => tokens.authorize(token),
    };
    const old = await startBridgeGeneration({ ...common, generation: 1 });
    const oldSocket = old.server.socketPath;
    const oldToken = tokens.issue({ turnId: "before-restart" });
    // The daemon goes away; its successor starts generation 2 and removes generation 1.
    await old.server.close();
    const current = await startBridgeGeneration({ ...common, generation: 2 });
    try {
      expect(await removeStaleGenerations(bridgesDir, 2)).toEqual([]);
      const shim = startShim(oldSocket, oldToken);
      expect(await withTimeout(shim.done, 2_000, () => "stale shim exit")).not.toBe(
        ShimExitCode.clientClosed,
      );
      expect(Date.now() - shim.startedAt).toBeLessThan(2_000);
      expect(shim.stdoutText()).toBe("");
    } finally {
      await current.server.close();
    }
  });
});
