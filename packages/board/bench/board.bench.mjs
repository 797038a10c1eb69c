// The board's bench, against dist/, on SQLite and on PostgreSQL (a throwaway cluster from
// scripts/postgres-test-cluster.mjs, or the server BEE_BENCH_POSTGRES_URL names):
// - wake latency: same board, same process over another connection, another process;
// - claims: sixteen claimer processes drain 2,000 actions, BENCH_CLAIM_WARM_UP_ROUNDS times
//   (default 2, reported apart: a bee is a long-lived process, so its claims run JIT-compiled on
//   plans the server has cached) and then BENCH_CLAIM_ROUNDS times (default 5), by claim-by-id (each
//   races for the records its wait returned: the baseline) and by claimNext, each round checked
//   against the store for double claims and lost actions; on PostgreSQL also the ceiling (see
//   claimer.mjs): the least a claim costs on this machine, board lock and code aside;
// - PostgreSQL round trips per operation, through a counting relay.
// Prints one JSON object: `claims` (the goal and the ratios against this run's baselines), then
// `sqlite` and `postgres`.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { openBoard } from "../dist/index.js";
import { RoundTripTap } from "../dist/testing/round-trips.js";

const wakeSamples = 300;
const claimProcesses = 16;
const claimActions = 2000;
const claimWarmUpRounds = Number(process.env.BENCH_CLAIM_WARM_UP_ROUNDS ?? "2");
const claimRounds = Number(process.env.BENCH_CLAIM_ROUNDS ?? "5");
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
  const { identity } = await board.register("waiter", { lease: false });
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

/**
 * Sixteen claimer processes drain `claimActions` actions addressed to `*`, `claimWarmUpRounds` and
 * then `claimRounds` times, in one mode. Each round, warm-up included, is checked against the store
 * itself: every action claimed exactly once, by the claimer that reported winning it.
 */
async function benchClaims(location, mode, claimedBy) {
  const board = await openBoard(location);
  if (mode === "ceiling") await adminQuery(location, (schema) => `CREATE SEQUENCE ${schema}.ceiling_seq`);
  const claimers = Array.from({ length: claimProcesses }, (_, index) =>
    start("claimer.mjs", [location, `${mode}-${index}`, mode]),
  );
  await Promise.all(claimers.map((claimer) => claimer.next()));
  const warmUp = [];
  const rounds = [];
  const latencies = [];
  let lostRaces = 0;
  let busy = 0;
  let doubleClaims = 0;
  let lostActions = 0;
  for (let round = 0; round < claimWarmUpRounds + claimRounds; round++) {
    const warmingUp = round < claimWarmUpRounds;
    const posted = [];
    for (let index = 0; index < claimActions; index++) {
      posted.push((await board.post({ kind: "bench", to: "*", from: "human", body: String(index) })).id);
    }
    if (mode === "ceiling") {
      // The ceiling's positions come from its sequence: start it past this round's posts.
      await adminQuery(
        location,
        (schema) => `SELECT setval('${schema}.ceiling_seq', (SELECT max(seq) FROM ${schema}.actions))`,
      );
    }
    const startedAt = process.hrtime.bigint();
    for (const claimer of claimers) claimer.send("go");
    const reports = (await Promise.all(claimers.map((claimer) => claimer.next()))).map((line) =>
      JSON.parse(line),
    );
    const finishedAt = reports.reduce((latest, report) => {
      const at = BigInt(report.lastClaimAt);
      return at > latest ? at : latest;
    }, startedAt);

    const winners = new Map();
    for (const report of reports) {
      for (const id of report.won) {
        if (winners.has(id)) doubleClaims += 1;
        winners.set(id, report.identity);
      }
      if (warmingUp) continue;
      lostRaces += report.taken;
      busy += report.busy;
      latencies.push(...report.latencies);
    }
    const holders = await claimedBy(location, posted);
    for (const id of posted) {
      if (!winners.has(id) || holders.get(id) === undefined) lostActions += 1;
      else if (holders.get(id) !== winners.get(id)) doubleClaims += 1;
    }
    const seconds = Number(finishedAt - startedAt) / 1e9;
    (warmingUp ? warmUp : rounds).push({
      claimed: winners.size,
      seconds: round3(seconds),
      claimsPerSecond: Math.round(winners.size / seconds),
    });
  }
  for (const claimer of claimers) claimer.child.stdin.end();
  await board.close();
  const perSecond = rounds.map((round) => round.claimsPerSecond).sort((a, b) => a - b);
  return {
    mode,
    processes: claimProcesses,
    actions: claimActions,
    rounds: rounds.length,
    claimsPerSecond: { median: median(perSecond), min: perSecond[0], max: perSecond.at(-1) },
    claimCallLatency: summary(latencies),
    lostRaces,
    busy,
    doubleClaims,
    lostActions,
    perRound: rounds,
    warmUpRounds: warmUp,
  };
}

function median(sorted) {
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : Math.round((sorted[middle - 1] + sorted[middle]) / 2);
}

const round3 = (value) => Math.round(value * 1000) / 1000;
const ratio = (value, baseline) => Math.round((value / baseline) * 100) / 100;

/** Who holds each action, read from the file itself. */
function sqliteHolders(path, ids) {
  const raw = new Database(path, { readonly: true });
  const read = raw.prepare("SELECT claimed_by FROM actions WHERE id = ? AND state = 'claimed'");
  const holders = new Map(ids.map((id) => [id, read.get(id)?.claimed_by]));
  raw.close();
  return holders;
}

/** Runs `text(schema)` on the server of a board location, on a connection of its own. */
async function adminQuery(location, text, values) {
  const url = new URL(location);
  const schema = url.searchParams.get("schema");
  url.searchParams.delete("schema");
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return (await client.query(text(schema), values)).rows;
  } finally {
    await client.end();
  }
}

/** Who holds each action, read from the database itself. */
async function postgresHolders(location, ids) {
  const rows = await adminQuery(
    location,
    (schema) => `SELECT id, claimed_by FROM ${schema}.actions WHERE id = ANY($1) AND state = 'claimed'`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row.claimed_by]));
}

/** The round trips each operation makes on connections already open, through a counting relay. */
async function postgresRoundTrips(location) {
  const tap = await RoundTripTap.start(location);
  const board = await openBoard(tap.url);
  try {
    const count = async (operation) => (await tap.count(operation)).roundTrips;
    const bob = await board.register("bob");
    const carol = await board.register("carol");
    const open = () => board.post({ kind: "bench", to: "*", from: "human", body: "" });
    const posted = await open();
    const profile = {
      post: await count(open),
      get: await count(() => board.get(posted.id)),
      list: await count(() => board.list({ limit: 10 })),
      claim: await count(() => board.claim(bob.identity, posted.id)),
      claimLost: await count(() => board.claim(carol.identity, posted.id)),
      claimNext: await count(() => board.claimNext(carol.identity)),
      claimNextNone: await count(() => board.claimNext(carol.identity)),
      complete: await count(() => board.complete(bob.identity, posted.id)),
    };
    const cancelled = await open();
    profile.cancel = await count(() => board.cancel("human", cancelled.id));
    profile.register = await count(() => board.register("dave"));
    profile.depart = await count(() => board.depart(carol.identity));
    await open();
    // Last: it opens the LISTEN connection, whose handshake would otherwise land in the next count.
    profile.waitForClaimable = await count(() =>
      board.waitForClaimable(bob.identity, undefined, { timeoutMs: 1000 }),
    );
    return profile;
  } finally {
    await board.close();
    await tap.close();
  }
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

// The machine is shared: the load around the run says how much of it the bench had.
const loadAtStart = loadavg()[0];
let server;
try {
  const sqlite = {
    wakeLatency: await benchWakeLatency(join(dir, "wake", "board.db")),
    claimById: await benchClaims(join(dir, "claim-by-id", "board.db"), "claim-by-id", sqliteHolders),
    claimNext: await benchClaims(join(dir, "claim-next", "board.db"), "claim-next", sqliteHolders),
  };
  server = postgresServer();
  const postgres = {
    wakeLatency: await benchWakeLatency(withSchema(server.url, "bee_bench_wake")),
    claimById: await benchClaims(
      withSchema(server.url, "bee_bench_claim_by_id"),
      "claim-by-id",
      postgresHolders,
    ),
    claimNext: await benchClaims(
      withSchema(server.url, "bee_bench_claim_next"),
      "claim-next",
      postgresHolders,
    ),
    ceiling: await benchClaims(withSchema(server.url, "bee_bench_ceiling"), "ceiling", postgresHolders),
    roundTrips: await postgresRoundTrips(withSchema(server.url, "bee_bench_round_trips")),
  };
  const claimsPerSecond = (result) => result.claimsPerSecond.median;
  const claims = {
    // issue 15's row: board claims on PostgreSQL, 16 claimers; goal >= 1,000/s, 0 double claims.
    goal: {
      postgresClaimNextPerSecond: 1000,
      measured: claimsPerSecond(postgres.claimNext),
      doubleClaims: postgres.claimNext.doubleClaims,
      met:
        claimsPerSecond(postgres.claimNext) >= 1000 &&
        postgres.claimNext.doubleClaims === 0 &&
        postgres.claimNext.lostActions === 0,
    },
    // Each against a baseline measured in this run.
    ratios: {
      postgresClaimNextToClaimById: ratio(
        claimsPerSecond(postgres.claimNext),
        claimsPerSecond(postgres.claimById),
      ),
      sqliteClaimNextToClaimById: ratio(claimsPerSecond(sqlite.claimNext), claimsPerSecond(sqlite.claimById)),
      // What the board costs over the least a claim can cost on this machine, in this run.
      postgresClaimNextToCeiling: ratio(
        claimsPerSecond(postgres.claimNext),
        claimsPerSecond(postgres.ceiling),
      ),
      postgresClaimNextToSqliteClaimNext: ratio(
        claimsPerSecond(postgres.claimNext),
        claimsPerSecond(sqlite.claimNext),
      ),
    },
  };
  process.stdout.write(
    `${JSON.stringify(
      {
        node: process.version,
        platform: process.platform,
        cpus: availableParallelism(),
        loadAverage1m: { start: round3(loadAtStart), end: round3(loadavg()[0]) },
        claims,
        sqlite,
        postgres,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, "SIGKILL");
  }
  rmSync(dir, { recursive: true, force: true });
  server?.stop();
}
