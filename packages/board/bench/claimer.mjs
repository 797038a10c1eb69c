// Claims every action it can until the board runs dry, then reports what it won and lost.
import { createInterface } from "node:readline";
import { openBoard } from "../dist/index.js";

// A PostgreSQL URL comes in BEE_BOARD (it may hold a password, which argv would show to ps).
const [pathArgument, name] = process.argv.slice(2);
const location = process.env.BEE_BOARD || pathArgument;
const board = await openBoard(location);
const { identity } = await board.register(name);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
process.stdout.write("ready\n");
await lines.next();

let cursor;
let claimed = 0;
let taken = 0;
let busy = 0;
let lastClaimAt = 0n;
for (;;) {
  const page = await board.waitForClaimable(identity, cursor, { timeoutMs: 300, limit: 32 });
  if (page.records.length === 0) break;
  // Agents pick in different orders; shuffling keeps all sixteen from racing for the same record.
  const records = [...page.records].sort(() => Math.random() - 0.5);
  for (const record of records) {
    try {
      const outcome = await board.claim(identity, record.id);
      if (outcome.outcome === "claimed") {
        claimed += 1;
        lastClaimAt = process.hrtime.bigint();
      } else taken += 1;
    } catch (error) {
      if (error.code !== "busy") throw error;
      busy += 1;
    }
  }
  cursor = page.cursor;
}
process.stdout.write(`${JSON.stringify({ claimed, taken, busy, lastClaimAt: String(lastClaimAt) })}\n`);
await board.close();
