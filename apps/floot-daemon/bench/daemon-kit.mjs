// What the daemon benches share: start the built bundle on a state dir and wait for its daemon.json,
// stop it, call its API, follow a turn over SSE, and p50/p95/p99 of a sample.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
// FLOOT_BENCH_BUNDLE: another build of floot.mjs (with its node_modules reachable), for an A/B run.
export const bundle = process.env.FLOOT_BENCH_BUNDLE ?? join(here, "..", "bundle", "floot.mjs");
export const fakeClaude = join(here, "fake-claude.mjs");
export const children = new Set();

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const round = (v) => Math.round(v * 100) / 100;
export const ratio = (a, b) => Math.round((a / b) * 100) / 100;

export function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const pick = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return {
    n: sorted.length,
    p50: round(pick(0.5)),
    p95: round(pick(0.95)),
    p99: round(pick(0.99)),
    max: round(sorted.at(-1)),
  };
}

export function readDaemonFile(stateDir) {
  try {
    return JSON.parse(readFileSync(join(stateDir, "daemon.json"), "utf8"));
  } catch {
    return undefined;
  }
}

/** Starts the bundle on `stateDir`; resolves when it wrote a daemon.json of its own (ready). */
export function startDaemon(root, stateDir, { env = {}, nodeArgs = [], daemonArgs = [] } = {}) {
  const startedAt = performance.now();
  const previous = readDaemonFile(stateDir)?.generation;
  const child = spawn(process.execPath, [...nodeArgs, bundle, "daemon", "--state", stateDir, ...daemonArgs], {
    env: { ...process.env, FLOOT_RUNTIME_DIR: join(root, "run"), FLOOT_CLAUDE_COMMAND: fakeClaude, ...env },
    stdio: ["ignore", "ignore", "ignore"],
  });
  children.add(child);
  child.on("exit", () => children.delete(child));
  return (async () => {
    for (;;) {
      const file = readDaemonFile(stateDir);
      if (file && file.pid === child.pid && file.generation !== previous) {
        return { child, file, readyMs: performance.now() - startedAt };
      }
      if (child.exitCode !== null) throw new Error(`daemon exited with ${child.exitCode}`);
      await sleep(2);
    }
  })();
}

export async function stopDaemon(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

// The bench's own client is node:http, not fetch: undici's web streams cost the bench's loop several
// times more per SSE chunk, and that loop's delay would read as the daemon's latency.
const keepAlive = new Agent({ keepAlive: true });

/** One request on a keep-alive connection; resolves with the status and the whole body as text. */
function send(file, method, path, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: file.port, method, path, agent: keepAlive, headers: headers(file, body) },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode, text }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function headers(file, body) {
  return { authorization: `Bearer ${file.token}`, ...(body && { "content-type": "application/json" }) };
}

export function api(file) {
  return async (method, path, body) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let reply;
    try {
      reply = await send(file, method, path, payload);
    } catch (error) {
      // A keep-alive connection the server just closed fails the request that reused it: a GET is retried once.
      if (method !== "GET") throw error;
      reply = await send(file, method, path, payload);
    }
    if (reply.status < 200 || reply.status >= 300)
      throw new Error(`${method} ${path}: ${reply.status} ${reply.text}`);
    return JSON.parse(reply.text);
  };
}

/** Opens an event stream (a connection of its own); resolves with the response once its head arrived. */
export function openStream(file, path, signal) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: file.port,
        method: "GET",
        path,
        agent: false,
        headers: headers(file),
        signal,
      },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`GET ${path}: ${res.statusCode}`));
        else resolve(res);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

export async function waitEnded(call, turnId, { pollMs = 5 } = {}) {
  for (;;) {
    const turn = await call("GET", `/v1/turns/${turnId}`);
    if (["completed", "failed", "cancelled", "interrupted"].includes(turn.phase)) return turn;
    await sleep(pollMs);
  }
}

/**
 * Reads a Server-Sent Events response (from `openStream`) to its end, handing each `data:` (parsed) and
 * the time its chunk arrived to `onData`.
 */
export function readSse(response, onData) {
  return new Promise((resolve, reject) => {
    let buffer = "";
    response.setEncoding("utf8");
    response.on("data", (chunk) => {
      const receivedAt = Date.now();
      buffer += chunk;
      let split = buffer.indexOf("\n\n");
      while (split !== -1) {
        const data = buffer
          .slice(0, split)
          .split("\n")
          .find((line) => line.startsWith("data: "));
        buffer = buffer.slice(split + 2);
        if (data) onData(JSON.parse(data.slice(6)), receivedAt);
        split = buffer.indexOf("\n\n");
      }
    });
    response.on("end", resolve);
    response.on("error", reject);
    // An aborted stream (the client stopped watching) may close without an end.
    response.on("close", resolve);
  });
}

/**
 * Follows a turn from index 0 and records, for each live assistant event, how long after its `at` (when
 * the daemon handed it to the journal) it reached this observer; `onLive` hears each such event as it
 * arrives, `onEnd` the turn's terminal event. Resolves with the number of events seen.
 */
export async function observe(file, turnId, latencies, { onLive, onEnd } = {}) {
  const response = await openStream(file, `/v1/turns/${turnId}/follow?from=0`);
  let count = 0;
  await readSse(response, (envelope, receivedAt) => {
    count += 1;
    const type = envelope.event.type;
    if (type === "assistant.text" || type === "assistant.delta") {
      latencies.push(receivedAt - Date.parse(envelope.at));
      onLive?.(turnId, latencies.at(-1));
    }
    if (type === "terminal") onEnd?.(turnId);
  });
  return count;
}
