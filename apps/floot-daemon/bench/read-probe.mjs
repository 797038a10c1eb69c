// The load profile's one-session reader, in a process of its own: a client of the daemon like any
// other, so the bench's own loop (a hundred followers' events) is not in its round trips. Reads its
// daemon file (port, token) and the session id as one JSON line on stdin, never argv; reads the
// session every 5 ms until `count` samples or stdin ends, then prints the samples as JSON, each
// `[startedAt, ms]`: when the read was sent (ms since the epoch, `performance.timeOrigin` based, the
// bench's clock too) and its round trip.
import { createInterface } from "node:readline";
import { api, sleep } from "./daemon-kit.mjs";

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const { file, sessionId, count } = JSON.parse((await lines.next()).value);
let stopped = false;
const ended = lines.next().then(() => (stopped = true));
const call = api(file);
const samples = [];
while (!stopped && samples.length < (count ?? Infinity)) {
  const startedAt = performance.now();
  await call("GET", `/v1/sessions/${sessionId}`);
  samples.push([performance.timeOrigin + startedAt, performance.now() - startedAt]);
  await sleep(5);
}
process.stdout.write(`${JSON.stringify(samples)}\n`);
if (!stopped) await ended;
