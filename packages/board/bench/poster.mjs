// Posts one action per stdin line, stamping the body with the monotonic clock just before the post.
import { createInterface } from "node:readline";
import { openSqliteBoard } from "../dist/index.js";

const [path, to] = process.argv.slice(2);
const board = await openSqliteBoard({ path });
process.stdout.write("ready\n");
for await (const _line of createInterface({ input: process.stdin })) {
  await board.post({ kind: "bench", to, from: "human", body: String(process.hrtime.bigint()) });
  process.stdout.write("posted\n");
}
await board.close();
