// Wake latency, idle cost, claim throughput and shutdown time of the built `bee` bundle, and how fast
// Esc in real interactive claude cancels a wait in the bridge, as JSON. Imports the model double and the
// test harness from their dist (`pnpm turbo run bench` builds them first).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveRealClient } from "@bridgeworks/test-harness";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { escapeDuringWait, startInteractiveClaude, waitOnPromptSteps } from "../test/interactive-claude.mjs";

const bundle = fileURLToPath(new URL("../bundle/bee.mjs", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "bee-bench-"));
const env = {
  PATH: process.env.PATH ?? "",
  HOME: root,
  BEE_BOARD: join(root, "board.db"),
  BEE_RUN_DIR: join(root, "run"),
};
const clients = [];
const escSamples = Number(process.env.BENCH_ESC_SAMPLES ?? 10);

async function closeClients() {
  await Promise.allSettled(clients.splice(0).map(({ client }) => client.close()));
}

async function bridge(agent) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bundle, "bridge"],
    env: { ...env, BEE_AGENT: agent },
    stderr: "ignore",
  });
  const client = new Client({ name: "bee-bench", version: "0" });
  await client.connect(transport);
  clients.push({ client, transport });
  return { client, pid: transport.pid };
}

const call = async (client, name, args = {}) => {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  if (result.isError) throw new Error(`${name}: ${result.content[0]?.text}`);
  return result.structuredContent;
};

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { n: sorted.length, p50Ms: round(at(0.5)), p99Ms: round(at(0.99)), maxMs: round(sorted.at(-1)) };
}
const round = (value) => Math.round(value * 1000) / 1000;

async function wakeLatency(waiter, poster, posts) {
  // Start after everything already claimable, so each wait is woken by its own post.
  let cursor;
  for (;;) {
    const page = await call(waiter, "bee_wait_action", { timeoutSeconds: 1, ...(cursor ? { cursor } : {}) });
    cursor = page.cursor;
    if (page.records.length === 0) break;
  }
  const fromPostReturned = [];
  const fromPostSent = [];
  for (let index = 0; index < posts; index++) {
    let wokeAt = 0;
    const waiting = call(waiter, "bee_wait_action", { timeoutSeconds: 30, cursor }).then((page) => {
      if (page.records.length !== 1)
        throw new Error(`expected the one posted record, got ${page.records.length}`);
      wokeAt = performance.now();
      return page;
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const sentAt = performance.now();
    await call(poster, "bee_post", { to: "waiter", body: `n${index}` });
    const postedAt = performance.now();
    const page = await waiting;
    cursor = page.cursor;
    fromPostReturned.push(wokeAt - postedAt);
    fromPostSent.push(wokeAt - sentAt);
  }
  // From the post's reply (the measure; negative when the wake overtakes that reply) and from
  // the post's request (always a full round trip, comparable with the trivial call's floor).
  return { fromPostReturned: summary(fromPostReturned), fromPostSent: summary(fromPostSent) };
}

function cpuAndRss(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return { ticks, rssKb };
}

// Real interactive claude under tmux (the pinned binary, isolated HOME, the model double): each round
// types a prompt the double answers with bee_wait_action {timeoutSeconds: 60}, waits for the bridge's
// `tools/call` line, presses Escape and takes the time to the bridge's `tool call cancelled` line. (A
// cancelled MCP request gets no response, so there is no answer to time beyond that.)
async function escCancelLatency(rounds) {
  const session = await startInteractiveClaude({ steps: waitOnPromptSteps("wait now") });
  try {
    await session.waitForLog((entry) => entry.message === "identity registered", 60_000);
    // claude takes input a moment after its MCP servers are up.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const samples = [];
    for (let index = 0; index < rounds; index++) {
      const { pressedAt, cancelledAt } = await escapeDuringWait(session, `wait now ${index}`);
      samples.push(cancelledAt - pressedAt);
      // Let claude settle back to its prompt before the next round.
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const starts = session.log().filter((entry) => entry.message === "bridge started").length;
    if (starts !== 1) throw new Error(`expected one bridge for the whole session, saw ${starts}`);
    return { claude: resolveRealClient("claude").version, ...summary(samples), targetMs: 1000 };
  } finally {
    // Ends the tmux server, claude and the bridge by pid, even when a round failed.
    await session.close();
  }
}

async function shutdownTimes(rounds) {
  const samples = [];
  for (let index = 0; index < rounds; index++) {
    const child = spawn(process.execPath, [bundle, "bridge"], {
      env: { ...env, BEE_AGENT: "stopper", CLAUDE_PID: String(process.pid) },
      stdio: ["pipe", "ignore", "pipe"],
    });
    await new Promise((resolve) =>
      child.stderr.on("data", (chunk) => String(chunk).includes("control channel listening") && resolve()),
    );
    const sentAt = performance.now();
    const exited = new Promise((resolve) => child.on("exit", resolve));
    child.kill("SIGINT");
    await exited;
    samples.push(performance.now() - sentAt);
  }
  return summary(samples);
}

try {
  const waiter = await bridge("waiter");
  const other = await bridge("poster");
  const trivial = [];
  for (let index = 0; index < 200; index++) {
    const started = performance.now();
    await call(waiter.client, "bee_whoami");
    trivial.push(performance.now() - started);
  }
  const sameProcess = await wakeLatency(waiter.client, waiter.client, 200);
  const acrossProcesses = await wakeLatency(waiter.client, other.client, 200);

  const racers = await Promise.all(Array.from({ length: 16 }, (_, index) => bridge(`racer${index}`)));
  const actions = 200;
  const ids = [];
  for (let index = 0; index < actions; index++)
    ids.push((await call(other.client, "bee_post", { to: "*", body: `c${index}` })).id);
  const claimStarted = performance.now();
  let won = 0;
  await Promise.all(
    racers.map(async ({ client }) => {
      for (const id of ids)
        if ((await call(client, "bee_claim", { actionId: id })).outcome === "claimed") won++;
    }),
  );
  const claimSeconds = (performance.now() - claimStarted) / 1000;

  const idle = await Promise.all(Array.from({ length: 50 }, (_, index) => bridge(`idle${index}`)));
  const idleSeconds = 30;
  const before = idle.map(({ pid }) => cpuAndRss(pid));
  const waits = idle.map(({ client }) =>
    call(client, "bee_wait_action", { timeoutSeconds: idleSeconds + 5 }).catch(() => {}),
  );
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
  const after = idle.map(({ pid }) => cpuAndRss(pid));
  const clockTicks = 100;
  const cpuPercent = after.map(
    (sample, index) => ((sample.ticks - before[index].ticks) / clockTicks / idleSeconds) * 100,
  );
  await Promise.all(waits);

  const result = {
    trivialToolCall: summary(trivial),
    wakeLatency: { sameBridge: sameProcess, acrossBridgeProcesses: acrossProcesses },
    claims: {
      claimers: 16,
      actions,
      attempts: actions * 16,
      won,
      attemptsPerSecond: Math.round((actions * 16) / claimSeconds),
      actionsPerSecond: Math.round(actions / claimSeconds),
    },
    idle: {
      bridges: 50,
      seconds: idleSeconds,
      cpuPercentPerBridge: {
        mean: round(cpuPercent.reduce((a, b) => a + b, 0) / cpuPercent.length),
        max: round(Math.max(...cpuPercent)),
      },
      rssMbPerBridge: {
        mean: round(after.reduce((a, b) => a + b.rssKb, 0) / after.length / 1024),
        max: round(Math.max(...after.map((s) => s.rssKb)) / 1024),
      },
    },
    sigintToExit: await shutdownTimes(20),
  };
  // The bench's own bridges would only add noise to a real claude session.
  await closeClients();
  result.escCancel = await escCancelLatency(escSamples);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  await closeClients();
  rmSync(root, { recursive: true, force: true });
}
