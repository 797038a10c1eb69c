// Wake latency (same board, same process over another connection, another process) and claim
// throughput with sixteen claimer processes, against dist/, on SQLite and on PostgreSQL (a throwaway
// cluster from scripts/postgres-test-cluster.mjs, or the server BEE_BENCH_POSTGRES_URL names).
// Prints one JSON object: the SQLite figures at the top level, the PostgreSQL ones under `postgres`.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { openBoard } from "../dist/index.js";

const wakeSamples = 300;
const claimProcesses = 16;
const claimActions = 2000;
const here = (file) => fileURLToPath(new URL(file, import.meta.url));

const dir = mkdtempSync(join(tmpdir(), "bee-board-bench-"));
const children = [];

const clusterScript = fileURLToPath(new URL("../../../scripts/postgres-test-cluster.mjs", import.meta.url));

/** A child gets a file path in argv, or a PostgreSQL URL (which may hold a password) in BEE_BOARD. */
function start(script, [location, ...args]) {
  const postgres = /^postgres(ql)?:/.test(location);
  const child = spawn(process.execPath, [here(script), postgres ? "-" : location, ...args], {
    stdio: ["pipe", "pipe", "inherit"],
    env: postgres ? { ...process.env, BEE_BOARD: location } : process.env,
  });
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

async function benchWakeLatency(path) {
  const board = await openBoard(path);
  const other = await openBoard(path);
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

async function benchClaims(path, countClaimedRows) {
  const board = await openBoard(path);
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

  const claimedRows = await countClaimedRows(path);
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

function countSqliteClaims(path) {
  const raw = new Database(path, { readonly: true });
  const { claimedRows } = raw
    .prepare("SELECT count(*) AS claimedRows FROM actions WHERE state = 'claimed'")
    .get();
  raw.close();
  return claimedRows;
}

async function countPostgresClaims(location) {
  const url = new URL(location);
  const schema = url.searchParams.get("schema");
  url.searchParams.delete("schema");
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  const { rows } = await client.query(
    `SELECT count(*)::int AS n FROM ${schema}.actions WHERE state = 'claimed'`,
  );
  await client.end();
  return rows[0].n;
}

/** The server to bench against, and how to stop it when the bench started it. */
function postgresServer() {
  if (process.env.BEE_BENCH_POSTGRES_URL) return { url: process.env.BEE_BENCH_POSTGRES_URL, stop: () => {} };
  const cluster = JSON.parse(
    execFileSync(process.execPath, [clusterScript, "start"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }),
  );
  return {
    url: cluster.url,
    stop: () => execFileSync(process.execPath, [clusterScript, "stop", cluster.dir], { stdio: "ignore" }),
  };
}

const withSchema = (serverUrl, schema) => {
  const url = new URL(serverUrl);
  url.searchParams.set("schema", schema);
  return url.toString();
};

let server;
try {
  const wakeLatencyResults = await benchWakeLatency(join(dir, "wake", "board.db"));
  const claims = await benchClaims(join(dir, "claims", "board.db"), countSqliteClaims);
  server = postgresServer();
  const postgres = {
    wakeLatency: await benchWakeLatency(withSchema(server.url, "bee_bench_wake")),
    claims: await benchClaims(withSchema(server.url, "bee_bench_claims"), countPostgresClaims),
  };
  process.stdout.write(
    `${JSON.stringify({ node: process.version, platform: process.platform, wakeLatency: wakeLatencyResults, claims, postgres }, null, 2)}\n`,
  );
} finally {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, "SIGKILL");
  }
  rmSync(dir, { recursive: true, force: true });
  server?.stop();
}
