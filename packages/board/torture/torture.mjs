#!/usr/bin/env node
// The board's crash torture (see harness.mjs), runnable on its own after a build of the board:
//   pnpm --filter @bridgeworks/board torture -- [--store sqlite|postgres|both] [--trials N] [--seed S]
//     [--ttl-ms MS] [--concurrency N] [--restart-every N]
// Prints one JSON summary per store (an array) and exits 1 on any violation. PostgreSQL runs on a
// throwaway cluster of its own (scripts/postgres-test-cluster.mjs), restarted every --restart-every
// trials (default: every 100th) while a claimer holds its action.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runTorture, startCluster } from "./harness.mjs";

// `pnpm torture -- …` hands the arguments on behind a `--` of its own.
const args = process.argv.slice(2);
while (args[0] === "--") args.shift();

const { values } = parseArgs({
  args,
  options: {
    store: { type: "string", default: "both" },
    trials: { type: "string", default: "1000" },
    seed: { type: "string", default: String(Date.now() % 100_000) },
    "ttl-ms": { type: "string", default: "1000" },
    concurrency: { type: "string", default: "8" },
    "restart-every": { type: "string", default: "100" },
  },
});
const integer = (name, min) => {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < min) {
    console.error(`torture: --${name} must be an integer of at least ${min}, got ${values[name]}`);
    process.exit(2);
  }
  return value;
};
if (!["sqlite", "postgres", "both"].includes(values.store)) {
  console.error(`torture: --store must be sqlite, postgres or both, got ${values.store}`);
  process.exit(2);
}
const common = {
  trials: integer("trials", 1),
  seed: integer("seed", 0),
  ttlMs: integer("ttl-ms", 100),
  concurrency: integer("concurrency", 1),
};

const summaries = [];
if (values.store !== "postgres") {
  const dir = mkdtempSync(join(tmpdir(), "bee-torture-"));
  try {
    summaries.push(await runTorture({ ...common, store: "sqlite", location: join(dir, "board.db") }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
if (values.store !== "sqlite") {
  const cluster = await startCluster();
  try {
    summaries.push(
      await runTorture({
        ...common,
        store: "postgres",
        location: cluster.url,
        restart: cluster.restart,
        restartEvery: integer("restart-every", 1),
      }),
    );
  } finally {
    await cluster.stop();
  }
}
process.stdout.write(`${JSON.stringify(summaries, null, 2)}\n`);
process.exitCode = summaries.some((summary) => summary.violations.length > 0) ? 1 : 0;
