import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { runTorture, startCluster, type TortureSummary } from "../torture/harness.mjs";

// A small sample of the crash torture (`pnpm torture` runs a thousand trials per store): claimers
// SIGKILLed or frozen at random points between their wake-up and their complete. The reclaim bound
// is widened here (a loaded machine); the torture itself holds TTL + 1 s.

function expectNothingBroken(summary: TortureSummary, trials: number): void {
  expect(summary.violations).toEqual([]);
  expect(summary.actions).toEqual({ posted: trials, done: trials, lost: 0, completedTwice: 0 });
  expect(summary.zombieCompletes.accepted).toBe(0);
  expect(summary.zombieCompletes.attempted).toBeGreaterThan(0);
  expect(summary.zombieCompletes.refusedStaleFence).toBe(summary.zombieCompletes.attempted);
  expect(summary.outcomes.reclaimedAfterDeath).toBeGreaterThan(0);
}

test("SQLite: no action lost or completed twice, every dead holder's action claimed again, every zombie refused", async () => {
  const dir = mkdtempSync(join(tmpdir(), "bee-torture-test-"));
  try {
    const summary = await runTorture({
      store: "sqlite",
      location: join(dir, "board.db"),
      trials: 16,
      seed: 3,
      concurrency: 4,
      reclaimBoundMs: 9000,
    });
    expectNothingBroken(summary, 16);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 300_000);

test("PostgreSQL, restarted mid-run: the same, with the server gone while claimers hold their actions", async () => {
  const cluster = await startCluster();
  try {
    const summary = await runTorture({
      store: "postgres",
      location: cluster.url,
      trials: 16,
      seed: 3,
      concurrency: 4,
      reclaimBoundMs: 9000,
      restart: cluster.restart,
      restartEvery: 8,
    });
    expectNothingBroken(summary, 16);
    expect(summary.restarts).toHaveLength(2);
  } finally {
    await cluster.stop();
  }
}, 300_000);
