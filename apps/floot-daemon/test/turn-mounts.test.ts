import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BridgeGeneration,
  startBridgeGeneration,
  TurnTokenRegistry,
} from "@bridgeworks/control-channel";
import { waitUntil } from "@bridgeworks/test-harness";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, test } from "vitest";
import type { TurnContext } from "../src/daemon/secret-broker.js";
import { createTurnMounts } from "../src/daemon/turn-mounts.js";

// A kept turn's rebind is not one-shot: a shim that took its rebind file and whose connection then
// failed (refused, closed before it was served) gets a fresh file with a fresh token, until it is
// served again; a turn whose shim never connected gets none. Real bridge generation, real sockets.

const checkMs = 50;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function world() {
  const root = mkdtempSync(join(tmpdir(), "floot-mounts-"));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const tokens = new TurnTokenRegistry<TurnContext>(randomBytes, { singleUse: true });
  const gateTokens = new TurnTokenRegistry<TurnContext>(randomBytes);
  const bridge: BridgeGeneration<TurnContext> = await startBridgeGeneration<TurnContext>({
    bridgesDir: join(root, "bridges"),
    generation: 1,
    authorize: (token, channel) => (channel === "mcp" ? tokens : gateTokens).authorize(token),
    createServer: () => new McpServer({ name: "test", version: "0" }).server,
  });
  cleanups.push(() => bridge.server.close());
  const rebindDir = join(root, "rebind");
  const mounts = createTurnMounts({
    bridge,
    tokens,
    gateTokens,
    shim: { node: process.execPath, script: "/unused" },
    gateHook: "/unused",
    gateDeadlineMs: 1_000,
    rebindDir,
    rebindCheckMs: checkMs,
  });
  const context: TurnContext = { turnId: "turn-1", sessionId: "session-1" };
  return { bridge, mounts, context, rebindFile: join(rebindDir, "turn-1.mcp") };
}

/** What a shim does with its rebind file: reads it and removes it. */
function take(path: string): { socket: string; token: string } {
  const credentials = JSON.parse(readFileSync(path, "utf8")) as { socket: string; token: string };
  unlinkSync(path);
  return credentials;
}

/** Connects with the token and initializes: resolves with the socket once the server answered. */
async function serve(credentials: { socket: string; token: string }, timeoutMs = 10_000): Promise<Socket> {
  const socket = connect(credentials.socket);
  cleanups.push(() => socket.destroy());
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString();
  });
  socket.on("error", () => {});
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write(`${JSON.stringify({ token: credentials.token })}\n`);
  socket.write(
    `${JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
    })}\n`,
  );
  await waitUntil(() => received.includes('"id":1'), timeoutMs, "initialize answered");
  return socket;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a kept turn's rebind file", () => {
  test("taken by a shim that was never served: a fresh one (fresh token) follows; none while served; none after release", async () => {
    const { bridge, mounts, context, rebindFile } = await world();
    const mount = mounts.adopt(context);
    cleanups.push(() => mount.release());
    const first = take(rebindFile);
    // Its connection failed: nothing serves the turn, and no file waits.
    await waitUntil(() => existsSync(rebindFile), 5_000, "a fresh rebind file");
    const second = take(rebindFile);
    expect(second.socket).toBe(first.socket);
    expect(second.token).not.toBe(first.token);

    const served = await serve(second);
    expect(bridge.server.mcpConnectionsOf(context)).toBe(1);
    await pause(checkMs * 8);
    expect(existsSync(rebindFile)).toBe(false);

    // Served, then lost (the daemon closed it, a restart of the shim's side): offered again.
    served.destroy();
    await waitUntil(() => existsSync(rebindFile), 5_000, "a rebind file after the loss");
    const third = take(rebindFile);
    mount.release();
    await pause(checkMs * 8);
    expect(existsSync(rebindFile)).toBe(false);
    // Released: its tokens open nothing.
    await expect(serve(third, 1_000)).rejects.toThrow("initialize answered");
  }, 60_000);

  test("a turn whose shim never connected (not adopted) gets no rebind file", async () => {
    const { mounts, context, rebindFile } = await world();
    const mount = mounts.mount(context);
    cleanups.push(() => mount.release());
    await pause(checkMs * 8);
    expect(existsSync(rebindFile)).toBe(false);
  });
});
