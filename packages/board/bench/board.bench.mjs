// Wake latency (same board, same process over another connection, another process) and claim
// throughput with sixteen claimer processes, against dist/. Prints one JSON object.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { openSqliteBoard } from "../dist/index.js";

const wakeSamples = 300;
const claimProcesses = 16;
const claimActions = 2000;
const here = (file) => fileURLToPath(new URL(file, import.meta.url));

const dir = mkdtempSync(join(tmpdir(), "bee-board-bench-"));
const children = [];

function start(script, args) {
  const child = spawn(process.execPath, [here(script), ...args], { stdio: ["pipe", "pipe", "inherit"] });
  children.push(child);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    child,
    next: async () => (await lines.next()).value,
    send: (line) => child.stdin.write(`${line}\n`),
  };
}

function summary(samplesNs) {
  const sorted = samplesNs.map((ns) => Number(ns) / 1e6).sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const round = (ms) => Math.round(ms * 1000) / 1000;
  return {
    samples: sorted.length,
    p50Ms: round(at(0.5)),
    p99Ms: round(at(0.99)),
    maxMs: round(sorted.at(-1)),
  };
}

/** Latency from just before `post` to the waiter holding the record, one post at a time. */
async function wakeLatency(waiter, identity, start, post) {
  let cursor = start;
  const samples = [];
  for (let index = 0; index < wakeSamples; index++) {
    const waiting = waiter.waitForClaimable(identity, cursor, { timeoutMs: 10_000 });
    await new Promise((resolve) => setImmediate(resolve));
    const postedAt = await post();
    const page = await waiting;
    const wokenAt = process.hrtime.bigint();
    if (page.records.length !== 1) throw new Error(`expected one record, got ${page.records.length}`);
    samples.push(wokenAt - (postedAt ?? BigInt(page.records[0].body)));
    cursor = page.cursor;
  }
  return { latency: summary(samples), cursor };
}

async function benchWakeLatency() {
  const path = join(dir, "wake", "board.db");
  const board = await openSqliteBoard({ path });
  const other = await openSqliteBoard({ path });
  const { identity } = await board.register("waiter");
  const post = (on) => async () => {
    const postedAt = process.hrtime.bigint();
    await on.post({ kind: "bench", to: "waiter", from: "human", body: "" });
    return postedAt;
  };

  const sameBoard = await wakeLatency(board, identity, undefined, post(board));
  const sameProcessOtherConnection = await wakeLatency(board, identity, sameBoard.cursor, post(other));
  const poster = start("poster.mjs", [path, "waiter"]);
  await poster.next();
  const crossProcess = await wakeLatency(board, identity, sameProcessOtherConnection.cursor, async () => {
    poster.send("post");
    await poster.next();
    return undefined; // the poster stamped the body just before its post
  });
  poster.child.stdin.end();
  await other.close();
  await board.close();
  return {
    sameBoard: sameBoard.latency,
    sameProcessOtherConnection: sameProcessOtherConnection.latency,
    crossProcess: crossProcess.latency,
  };
}

async function benchClaims() {
  const path = join(dir, "claims", "board.db");
  const board = await openSqliteBoard({ path });
  for (let index = 0; index < claimActions; index++) {
    await board.post({ kind: "bench", to: "*", from: "human", body: String(index) });
  }
  const claimers = Array.from({ length: claimProcesses }, (_, index) =>
    start("claimer.mjs", [path, `claimer-${index}`]),
  );
  await Promise.all(claimers.map((claimer) => claimer.next()));

  const startedAt = process.hrtime.bigint();
  for (const claimer of claimers) claimer.send("go");
  const reports = (await Promise.all(claimers.map((claimer) => claimer.next()))).map((line) =>
    JSON.parse(line),
  );
  const finishedAt = reports.reduce((latest, report) => {
    const at = BigInt(report.lastClaimAt);
    return at > latest ? at : latest;
  }, startedAt);
  await board.close();

  const raw = new Database(path, { readonly: true });
  const { claimedRows } = raw
    .prepare("SELECT count(*) AS claimedRows FROM actions WHERE state = 'claimed'")
    .get();
  raw.close();
  const claimed = reports.reduce((sum, report) => sum + report.claimed, 0);
  const seconds = Number(finishedAt - startedAt) / 1e9;
  return {
    processes: claimProcesses,
    actions: claimActions,
    claimed,
    claimedRows,
    eachClaimedOnce: claimed === claimActions && claimedRows === claimActions,
    lostRaces: reports.reduce((sum, report) => sum + report.taken, 0),
    busy: reports.reduce((sum, report) => sum + report.busy, 0),
    seconds: Math.round(seconds * 1000) / 1000,
    claimsPerSecond: Math.round(claimed / seconds),
  };
}

try {
  const wakeLatencyResults = await benchWakeLatency();
  const claims = await benchClaims();
  process.stdout.write(
    `${JSON.stringify({ node: process.version, platform: process.platform, wakeLatency: wakeLatencyResults, claims }, null, 2)}\n`,
  );
} finally {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, "SIGKILL");
  }
  rmSync(dir, { recursive: true, force: true });
}
