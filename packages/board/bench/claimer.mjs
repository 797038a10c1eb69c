// One of the bench's claimers. Each `go` line starts a round: it claims until the board has nothing
// left it can claim, then reports what it won, what it lost and how long each claim call took.
//   claim-by-id: waits for claimable actions and claims each by id, in its own random order, as
//                agents that race for the same records do;
//   claim-next:  asks the board for the next claimable action until it answers none.
import { createInterface } from "node:readline";
import { openBoard } from "../dist/index.js";

// A PostgreSQL URL comes in BEE_BOARD (it may hold a password, which argv would show to ps).
const [pathArgument, name, mode] = process.argv.slice(2);
if (mode !== "claim-by-id" && mode !== "claim-next") throw new Error(`unknown mode ${mode}`);
const location = process.env.BEE_BOARD || pathArgument;
const board = await openBoard(location);
const { identity } = await board.register(name);
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
  await (mode === "claim-next" ? claimNext(round) : claimById(round));
  const { latencies, taken, busy, lastClaimAt } = round;
  process.stdout.write(
    `${JSON.stringify({ identity, won, taken, busy, latencies, lastClaimAt: String(lastClaimAt) })}\n`,
  );
}
await board.close();
