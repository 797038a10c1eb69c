// Test-only fault injection for the Floot daemon; never part of a bundle. Loaded with
// `node --import <this file> bundle/floot.mjs daemon …`, it reads a plan from FLOOT_FAULTS (JSON:
// `{"<diagnostics channel>": {"action": "kill" | "hold", "ms"?: n, "skip"?: n}}`) and removes the
// variable, so nothing the daemon starts inherits it. It subscribes to each named channel (the
// daemon's trace points, `floot:<point>`); at the hit after `skip` others it appends one JSON line
// to FLOOT_FAULTS_LOG, then SIGKILLs this process (`kill`) or blocks its thread for `ms` (`hold`).
// Channel subscribers run synchronously inside `publish`, so the fault lands at that very point.

import { subscribe } from "node:diagnostics_channel";
import { appendFileSync } from "node:fs";

const plan = JSON.parse(process.env.FLOOT_FAULTS ?? "{}");
const log = process.env.FLOOT_FAULTS_LOG;
delete process.env.FLOOT_FAULTS;
delete process.env.FLOOT_FAULTS_LOG;

for (const [name, rule] of Object.entries(plan)) {
  if (rule.action !== "kill" && rule.action !== "hold") {
    throw new Error(
      `FLOOT_FAULTS: ${name}: action must be "kill" or "hold", got ${JSON.stringify(rule.action)}`,
    );
  }
  let hits = 0;
  subscribe(name, (data) => {
    hits += 1;
    if (hits <= (rule.skip ?? 0)) return;
    if (rule.fired && rule.action === "hold") return;
    rule.fired = true;
    if (log)
      appendFileSync(
        log,
        `${JSON.stringify({ point: name, action: rule.action, hit: hits, pid: process.pid, data })}\n`,
      );
    if (rule.action === "kill") process.kill(process.pid, "SIGKILL");
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, rule.ms ?? 60_000);
  });
}
