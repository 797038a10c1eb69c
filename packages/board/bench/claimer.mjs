// One of the bench's claimers. Each `go` line starts a round: it claims until the board has nothing
// left it can claim, then reports what it won, what it lost and how long each claim call took.
//   claim-by-id: waits for claimable actions and claims each by id, in its own random order, as
//                agents that race for the same records do;
//   claim-next:  asks the board for the next claimable action until it answers none;
//   ceiling:     (PostgreSQL) the least a claim can cost, for comparison only: one bare UPDATE that
//                takes the oldest open row addressed to `*` (every bench action is) FOR UPDATE SKIP
//                LOCKED, found by one probe of the open-actions index, with a position from a sequence
//                and no board lock (so positions are not in commit order: not a board) and no board code.
import { createInterface } from "node:readline";
import pg from "pg";
import { openBoard } from "../dist/index.js";

// A PostgreSQL URL comes in BEE_BOARD (it may hold a password, which argv would show to ps).
const [pathArgument, name, mode] = process.argv.slice(2);
if (!["claim-by-id", "claim-next", "ceiling"].includes(mode)) throw new Error(`unknown mode ${mode}`);
const location = process.env.BEE_BOARD || pathArgument;
const board = await openBoard(location);
// No lease: a bench claimer runs for minutes and renews nothing; leases cost a claim nothing more.
const { identity } = await board.register(name, { lease: false });
process.stdout.write("ready\n");

async function timed(call, latencies) {
  const startedAt = process.hrtime.bigint();
  const value = await call();
  latencies.push(Number(process.hrtime.bigint() - startedAt));
  return value;
}

async function claimById(round) {
  let cursor;
  for (;;) {
    const page = await board.waitForClaimable(identity, cursor, { timeoutMs: 300, limit: 32 });
    if (page.records.length === 0) return;
    // Agents pick in different orders; shuffling keeps all sixteen from racing for the same record.
    const records = [...page.records].sort(() => Math.random() - 0.5);
    for (const record of records) {
      try {
        const outcome = await timed(() => board.claim(identity, record.id), round.latencies);
        if (outcome.outcome === "claimed") round.won(record.id);
        else round.taken += 1;
      } catch (error) {
        if (error.code !== "busy") throw error;
        round.busy += 1;
      }
    }
    cursor = page.cursor;
  }
}

async function claimNext(round) {
  for (;;) {
    try {
      const outcome = await timed(() => board.claimNext(identity), round.latencies);
      if (outcome.outcome === "none") return;
      round.won(outcome.record.id);
    } catch (error) {
      if (error.code !== "busy") throw error;
      round.busy += 1;
    }
  }
}

async function ceiling(round) {
  const url = new URL(location);
  const schema = url.searchParams.get("schema");
  url.searchParams.delete("schema");
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  const claim = {
    name: "ceiling",
    text: `UPDATE ${schema}.actions SET state = 'claimed', claimed_by = $1, claimed_at = $2,
             seq = nextval('${schema}.ceiling_seq')
           WHERE id = (SELECT id FROM ${schema}.actions WHERE state = 'open' AND recipient = '*'
                       ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
           RETURNING id`,
    values: [identity, Date.now()],
  };
  try {
    for (;;) {
      const { rows } = await timed(() => client.query(claim), round.latencies);
      if (rows.length === 0) return;
      round.won(rows[0].id);
    }
  } finally {
    await client.end();
  }
}

const modes = { "claim-by-id": claimById, "claim-next": claimNext, ceiling };

for await (const _go of createInterface({ input: process.stdin })) {
  const won = [];
  const round = {
    latencies: [],
    taken: 0,
    busy: 0,
    lastClaimAt: 0n,
    won: (id) => {
      won.push(id);
      round.lastClaimAt = process.hrtime.bigint();
    },
  };
  await modes[mode](round);
  const { latencies, taken, busy, lastClaimAt } = round;
  process.stdout.write(
    `${JSON.stringify({ identity, won, taken, busy, latencies, lastClaimAt: String(lastClaimAt) })}\n`,
  );
}
await board.close();
