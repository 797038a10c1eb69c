import { existsSync } from "node:fs";
import { get, type IncomingMessage } from "node:http";
import { join } from "node:path";
import { defaultMcpConnectionLimits } from "@bridgeworks/control-channel";
import { type IdleFlood, idleFlood, openDescriptors, waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import { FlootWorld } from "./daemon-harness.js";

// A flood of idle connections against each listener of the built daemon: the TCP port, `api.sock` and
// the generation's `mcp.sock`. The daemon holds no more descriptors than a listener's cap, a real client
// is served while the flood is held, and the idle timeout (short here, set by the test) ends the flood
// but not an SSE stream or an MCP session, however quiet.

const floodSize = 3_000;
const limits = { maxConnections: 200, maxIdleConnections: 50, idleTimeoutMs: 1_500 };
const limitsEnv = {
  FLOOT_MAX_CONNECTIONS: String(limits.maxConnections),
  FLOOT_MAX_IDLE_CONNECTIONS: String(limits.maxIdleConnections),
  FLOOT_IDLE_TIMEOUT_MS: String(limits.idleTimeoutMs),
};

let world: FlootWorld | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

async function flood(target: { port: number } | { path: string }): Promise<IdleFlood> {
  const held = await idleFlood(target, floodSize);
  cleanups.push(() => held.end());
  return held;
}

/** `GET /v1/changes` over TCP: an SSE stream that stays open with nothing to say but heartbeats. */
async function openChangesStream(port: number, token: string) {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const request = get(
      {
        host: "127.0.0.1",
        port,
        path: "/v1/changes",
        agent: false,
        headers: { authorization: `Bearer ${token}`, host: `127.0.0.1:${port}` },
      },
      resolve,
    );
    request.on("error", reject);
    cleanups.push(() => request.destroy());
  });
  let closed = false;
  response.on("data", () => {});
  response.once("close", () => {
    closed = true;
  });
  return { status: response.statusCode, closed: () => closed };
}

describe("connection limits of the daemon's listeners", () => {
  test("the TCP port: the flood holds at most the cap, /v1/status is served meanwhile, the flood is closed and an SSE stream is not", async () => {
    world = await FlootWorld.create("claude", { steps: [] });
    const daemon = await world.startDaemon(limitsEnv);
    const { port, token } = daemon.file;
    const stream = await openChangesStream(port, token);
    expect(stream.status).toBe(200);
    const before = openDescriptors(daemon.process.pid);

    const held = await flood({ port });
    expect(held.open()).toBeGreaterThan(0);
    expect(openDescriptors(daemon.process.pid) - before).toBeLessThanOrEqual(limits.maxConnections);
    const status = await fetch(`http://127.0.0.1:${port}/v1/status`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(status.status).toBe(200);
    expect(((await status.json()) as { pid: number }).pid).toBe(daemon.process.pid);
    expect(openDescriptors(daemon.process.pid) - before).toBeLessThanOrEqual(limits.maxConnections);

    await waitUntil(() => held.open() === 0, 60_000, "every flood connection closed");
    // Open through all of it, several idle timeouts long, with nothing but heartbeats to send.
    expect(stream.closed()).toBe(false);
  });

  test("api.sock: the flood holds at most the cap, the CLI's client is served meanwhile, and the flood is closed", async () => {
    world = await FlootWorld.create("claude", { steps: [] });
    const daemon = await world.startDaemon(limitsEnv);
    const before = openDescriptors(daemon.process.pid);

    const held = await flood({ path: daemon.file.socket });
    expect(held.open()).toBeGreaterThan(0);
    expect(openDescriptors(daemon.process.pid) - before).toBeLessThanOrEqual(limits.maxConnections);
    const status = await world.client.request<{ pid: number }>("GET", "/v1/status");
    expect(status.pid).toBe(daemon.process.pid);
    expect(openDescriptors(daemon.process.pid) - before).toBeLessThanOrEqual(limits.maxConnections);

    await waitUntil(() => held.open() === 0, 60_000, "every flood connection closed");
  });

  test("mcp.sock: the flood holds at most the idle cap, a real claude turn's gated tool call runs meanwhile, and the flood is closed", async () => {
    world = await FlootWorld.create("claude", {
      steps: [
        {
          match: { lastUserTextIncludes: "[flooded]" },
          response: {
            events: [
              {
                type: "tool_use",
                id: "toolu_flooded",
                nameFrom: { equals: "Bash" },
                input: { command: "echo ran >> flooded.txt", description: "run it" },
              },
            ],
          },
        },
        { match: { toolResultFor: "toolu_flooded" }, response: { events: [{ type: "text", text: "DONE" }] } },
      ],
    });
    const daemon = await world.startDaemon(limitsEnv);
    const socketPath = join(world.stateDir, "bridges", `g${daemon.file.generation}`, "mcp.sock");
    const session = await world.createSession();
    const before = openDescriptors(daemon.process.pid);

    const held = await flood({ path: socketPath });
    expect(held.open()).toBeGreaterThan(0);
    // The idle cap, and a little for the daemon's other descriptors, which come and go meanwhile.
    const bound = defaultMcpConnectionLimits.maxIdleConnections + 16;
    expect(openDescriptors(daemon.process.pid) - before).toBeLessThanOrEqual(bound);
    // The turn's CLI, its shim and its gate hook all connect while the flood is held.
    const turn = await world.send(session.id, "[flooded] run it");
    const done = await world.waitForEnd(turn.id, 120_000);
    expect(done.phase, JSON.stringify(done.error)).toBe("completed");
    const events = await world.events(turn.id);
    expect(events.some((envelope) => envelope.event.type === "tool.admitted")).toBe(true);
    expect(existsSync(join(session.workspace, "flooded.txt"))).toBe(true);

    // The hello timeout (5 s) is the MCP socket's idle timeout.
    await waitUntil(() => held.open() === 0, 60_000, "every flood connection closed");
  });
});
