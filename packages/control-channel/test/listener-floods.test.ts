// A flood of idle connections against each listener of this package, in this process: it holds no more
// than the idle cap on the server's side, a real client is still served while the flood is held, and
// whatever of the flood is left is closed after the idle timeout (short here, passed in by the test).
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { type AgentIdentity, mintAgentIdentity } from "@bridgeworks/protocol";
import { type IdleFlood, idleFlood, waitUntil } from "@bridgeworks/test-harness";
import { afterEach, expect, test } from "vitest";
import {
  type ControlServer,
  mintToken,
  postRetire,
  type SettledRetireOutcome,
  sendSocketRequest,
  startControlServer,
} from "../src/index.js";
import { useTempDirs } from "./helpers.js";
import { connectSocketClient, useMcpServers } from "./mcp-helpers.js";

const floodSize = 3_000;
const tempDir = useTempDirs();
const startMcpServer = useMcpServers();
const floods: IdleFlood[] = [];
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const flood of floods.splice(0)) flood.end();
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function flood(target: { port: number } | { path: string }): Promise<IdleFlood> {
  const held = await idleFlood(target, floodSize);
  floods.push(held);
  return held;
}

const done: SettledRetireOutcome = {
  status: "done",
  retired: mintAgentIdentity("worker", randomBytes) as AgentIdentity,
  current: mintAgentIdentity("worker", randomBytes) as AgentIdentity,
};

test("the control server: 3,000 idle connections hold at most the idle cap, a retire still succeeds, the rest close after the idle timeout", async () => {
  const limits = {
    maxConnections: 32,
    maxIdleConnections: 8,
    idleTimeoutMs: 1_000,
    headersTimeoutMs: 1_000,
    requestTimeoutMs: 2_000,
  };
  const token = mintToken(randomBytes);
  const ownProcess = { pid: process.pid, startTime: "1" };
  const server: ControlServer = await startControlServer({
    token,
    process: ownProcess,
    retire: async () => done,
    connectionLimits: limits,
  });
  closers.push(() => server.close());

  const held = await flood({ port: server.port });
  expect(server.connectionCounts().open).toBeLessThanOrEqual(limits.maxIdleConnections);
  expect(held.open()).toBeGreaterThan(0);

  const retired = await postRetire({ port: server.port, token, ...ownProcess }, { timeoutMs: 60_000 });
  expect(retired).toEqual({ kind: "answered", httpStatus: 200, outcome: done });
  expect(server.connectionCounts().open).toBeLessThanOrEqual(limits.maxIdleConnections);

  await waitUntil(() => held.open() === 0, 60_000, "every flood connection closed");
  await waitUntil(() => server.connectionCounts().open === 0, 10_000, "the server holds nothing");
}, 180_000);

test("the MCP socket: 3,000 idle connections hold at most the idle cap, a session and a request still work, and only the silent ones close", async () => {
  const limits = { maxConnections: 64, maxIdleConnections: 16 };
  const dir = join(await tempDir(), "g1");
  const { server, tokens } = await startMcpServer({
    dir,
    generation: 1,
    helloTimeoutMs: 1_000,
    connectionLimits: limits,
    handleRequest: (context, request) => ({ turn: context.turnId, request }),
  });
  const token = tokens.issue({ turnId: "turn-a" });

  const held = await flood({ path: server.socketPath });
  expect(server.connectionCounts().open).toBeLessThanOrEqual(limits.maxIdleConnections);
  expect(held.open()).toBeGreaterThan(0);

  const session = await connectSocketClient(server.socketPath, token);
  closers.push(() => session.close());
  expect((await session.listTools()).tools.map((tool) => tool.name)).toEqual(["echo", "slow"]);
  const answered = await sendSocketRequest({
    socketPath: server.socketPath,
    token,
    request: { ask: 1 },
    timeoutMs: 60_000,
  });
  expect(answered).toEqual({ kind: "answered", answer: { turn: "turn-a", request: { ask: 1 } } });

  await waitUntil(() => held.open() === 0, 60_000, "every flood connection closed");
  // The session stayed quiet longer than the hello timeout and is still served.
  expect(server.connectionCounts()).toEqual({ open: 1, idle: 0 });
  expect((await session.listTools()).tools.length).toBe(2);
}, 180_000);
