// Posts one action per stdin line, stamping the body with the monotonic clock just before the post.
import { createInterface } from "node:readline";
import { openBoard } from "../dist/index.js";

// A PostgreSQL URL comes in BEE_BOARD (it may hold a password, which argv would show to ps).
const [pathArgument, to] = process.argv.slice(2);
const location = process.env.BEE_BOARD || pathArgument;
const board = await openBoard(location);
process.stdout.write("ready\n");
for await (const _line of createInterface({ input: process.stdin })) {
  await board.post({ kind: "bench", to, from: "human", body: String(process.hrtime.bigint()) });
  process.stdout.write("posted\n");
}
await board.close();
