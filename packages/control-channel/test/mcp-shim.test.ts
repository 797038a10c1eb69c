import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
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
  type ShimOptions,
  startBridgeGeneration,
  TurnTokenRegistry,
} from "../src/index.js";
import { deferred, exited, socketHolder, useChildren, useTempDirs } from "./helpers.js";
import { echoProbe, echoServerFactory, type TurnContext } from "./mcp-helpers.js";

/**
 * As the daemon writes a rebind file: whole, at once (write, then rename). The shim takes the file as
 * it reads it, so a half-written one would be taken and lost; the daemon never leaves one.
 */
async function writeRebindFile(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text, { mode: 0o600 });
  await rename(`${path}.tmp`, path);
}

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

function startShim(
  socketPath: string | undefined,
  token: string | undefined,
  rebind: Pick<ShimOptions, "rebindFile" | "rebindWaitMs"> = {},
): ShimRun {
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
  const done = runShim({
    socketPath,
    token,
    stdin,
    stdout,
    stderr,
    exit: (code) => exitCodes.push(code),
    ...rebind,
    rebindPollMs: 20,
  });
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

describe("runShim across a daemon restart (rebind)", () => {
  const line = (message: object) => `${JSON.stringify(message)}\n`;
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18" },
  };
  const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
  const call = (id: number) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "requestSecret" },
  });

  test("waits for its rebind file, reconnects with the new token, introduces the client again and asks again what was open, by the same id", async () => {
    const dir = await tempDir();
    const oldBridge = await rawServer(join(dir, "old.sock"));
    const oldToken = mintToken(randomBytes);
    const newToken = mintToken(randomBytes);
    const rebindFile = join(dir, "turn.rebind");
    const shim = startShim(join(dir, "old.sock"), oldToken, { rebindFile, rebindWaitMs: 20_000 });
    const before = await withTimeout(oldBridge.connections, 5_000, () => "old bridge connection");
    shim.stdin.write(line(initialize));
    await waitUntil(() => oldBridge.received().includes('"initialize"'), 5_000, "initialize relayed");
    before.write(line({ jsonrpc: "2.0", id: 1, result: { serverInfo: { name: "old" } } }));
    shim.stdin.write(line(initialized));
    shim.stdin.write(line(call(2)));
    await waitUntil(() => oldBridge.received().includes('"id":2'), 5_000, "call 2 relayed");
    // The daemon restarts: the old bridge goes away with call 2 unanswered.
    before.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    // What the client writes meanwhile is held, not lost.
    shim.stdin.write(line(call(3)));
    expect(shim.exitCodes).toEqual([]);

    const newBridge = await rawServer(join(dir, "new.sock"));
    await writeRebindFile(rebindFile, JSON.stringify({ socket: join(dir, "new.sock"), token: newToken }));
    const after = await withTimeout(newBridge.connections, 10_000, () => "new bridge connection");
    await waitUntil(() => newBridge.received().includes('"id":3'), 5_000, "held call 3 sent");
    const sent = newBridge
      .received()
      .trim()
      .split("\n")
      .map((each) => JSON.parse(each) as Record<string, unknown>);
    expect(sent[0]).toEqual({ token: newToken });
    expect(sent[1]).toMatchObject({ method: "initialize", id: "bridgeworks-shim-rebind" });
    expect(sent.slice(2)).toEqual([initialized, call(2), call(3)]);
    expect(existsSync(rebindFile)).toBe(false);
    expect(newBridge.received()).not.toContain(oldToken);

    // The new server's answer to the replayed initialize is not the client's; the calls' answers are.
    after.write(
      line({ jsonrpc: "2.0", id: "bridgeworks-shim-rebind", result: { serverInfo: { name: "new" } } }),
    );
    after.write(line({ jsonrpc: "2.0", id: 2, result: { content: [] } }));
    after.write(line({ jsonrpc: "2.0", id: 3, result: { content: [] } }));
    await waitUntil(() => shim.stdoutText().includes('"id":3'), 5_000, "answers relayed");
    const answered = shim
      .stdoutText()
      .trim()
      .split("\n")
      .map((each) => (JSON.parse(each) as { id: unknown }).id);
    expect(answered).toEqual([1, 2, 3]);
    expect(shim.exitCodes).toEqual([]);
  }, 30_000);

  test("an initialize the old bridge took and never answered is asked again by its own id, and its answer reaches the client", async () => {
    const dir = await tempDir();
    const oldBridge = await rawServer(join(dir, "old.sock"));
    const newToken = mintToken(randomBytes);
    const rebindFile = join(dir, "turn.rebind");
    const shim = startShim(join(dir, "old.sock"), mintToken(randomBytes), {
      rebindFile,
      rebindWaitMs: 20_000,
    });
    const before = await withTimeout(oldBridge.connections, 5_000, () => "old bridge connection");
    shim.stdin.write(line(initialize));
    await waitUntil(() => oldBridge.received().includes('"initialize"'), 5_000, "initialize relayed");
    // The daemon dies before it answers (the keeper torture: a SIGTERM as Claude Code starts its MCP servers).
    before.destroy();
    const newBridge = await rawServer(join(dir, "new.sock"));
    await writeRebindFile(rebindFile, JSON.stringify({ socket: join(dir, "new.sock"), token: newToken }));
    const after = await withTimeout(newBridge.connections, 10_000, () => "new bridge connection");
    await waitUntil(() => newBridge.received().includes('"initialize"'), 5_000, "initialize sent again");
    const sent = newBridge
      .received()
      .trim()
      .split("\n")
      .map((each) => JSON.parse(each) as Record<string, unknown>);
    expect(sent).toEqual([{ token: newToken }, initialize]);
    after.write(line({ jsonrpc: "2.0", id: 1, result: { serverInfo: { name: "new" } } }));
    await waitUntil(() => shim.stdoutText().includes('"id":1'), 5_000, "the answer relayed");
    expect(JSON.parse(shim.stdoutText().trim())).toMatchObject({
      id: 1,
      result: { serverInfo: { name: "new" } },
    });
    expect(shim.exitCodes).toEqual([]);
  }, 30_000);

  test("a bridge unreachable from the start (the daemon restarting as the CLI started) is waited for too", async () => {
    const dir = await tempDir();
    const rebindFile = join(dir, "turn.rebind");
    const token = mintToken(randomBytes);
    const shim = startShim(join(dir, "gone.sock"), mintToken(randomBytes), {
      rebindFile,
      rebindWaitMs: 20_000,
    });
    shim.stdin.write(line(initialize));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(shim.exitCodes).toEqual([]);
    const bridge = await rawServer(join(dir, "new.sock"));
    await writeRebindFile(rebindFile, JSON.stringify({ socket: join(dir, "new.sock"), token }));
    await waitUntil(() => bridge.received().includes('"initialize"'), 10_000, "initialize sent");
    // Never sent before, so sent once, as the client wrote it (no replay of its own).
    expect(
      bridge
        .received()
        .trim()
        .split("\n")
        .map((each) => JSON.parse(each)),
    ).toEqual([{ token }, initialize]);
  }, 30_000);

  test("its token file already gone (the daemon restarted before the CLI started it): waits for the rebind file", async () => {
    const dir = await tempDir();
    const rebindFile = join(dir, "turn.rebind");
    const token = mintToken(randomBytes);
    const shim = startShim(join(dir, "gone.sock"), undefined, { rebindFile, rebindWaitMs: 20_000 });
    const bridge = await rawServer(join(dir, "new.sock"));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(shim.exitCodes).toEqual([]);
    await writeRebindFile(rebindFile, JSON.stringify({ socket: join(dir, "new.sock"), token }));
    await waitUntil(() => bridge.received().includes(token), 10_000, "new token sent");
  }, 30_000);

  test("with no rebind file in time it exits bridgeClosed, as without one", async () => {
    const dir = await tempDir();
    const bridge = await rawServer(join(dir, "b.sock"));
    const shim = startShim(join(dir, "b.sock"), mintToken(randomBytes), {
      rebindFile: join(dir, "never"),
      rebindWaitMs: 300,
    });
    (await withTimeout(bridge.connections, 5_000, () => "connection")).destroy();
    expect(await withTimeout(shim.done, 10_000, () => "shim exit")).toBe(ShimExitCode.bridgeClosed);
    expect(shim.stderrText()).toContain("no daemon rebound this turn");
  });
});
