import type { Backend } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { keeperKillPoints, runTorture } from "./torture/harness.js";

// A small fixed sample of the crash torture in keeper mode (`pnpm torture -- --keeper on` runs
// hundreds of trials): one trial per keeper point, the real CLI under the keeper against the model
// double, a loaded journal and API clients throughout.

describe.each<Backend>(["claude", "codex"])("keeper torture sample: %s", (backend) => {
  test("SIGTERM, SIGKILL mid-spool, a kill during adoption, the keeper killed: no needless interruption, every spooled line journaled once, nothing left", async () => {
    const summary = await runTorture({
      backend,
      mode: "keeper",
      trials: keeperKillPoints.length,
      seed: 7,
      points: keeperKillPoints,
      order: "cycle",
      // Every point must fire: at most 400 ms into `running` (a codex turn can end in under 2 s; CI saw
      // the keeper point miss with a longer draw).
      maxDelayMs: 400,
      sessions: 500,
      pollers: 2,
      followers: 1,
    });
    expect(summary.violations).toEqual([]);
    // Every point stopped the daemon while the turn ran.
    for (const point of keeperKillPoints)
      expect(summary.kills[point], point).toEqual({ planned: 1, fired: 1 });
    // sigterm, mid-spool and adoption leave the CLI to the keeper; the keeper kill takes it away.
    expect(summary.keeper?.aliveAtRestart).toBeGreaterThanOrEqual(3);
    expect(summary.keeper?.needlessInterruptions).toBe(0);
    expect(summary.keeper?.midSpoolAhead).toBe(1);
    expect(summary.keeper?.spoolsChecked).toBeGreaterThanOrEqual(keeperKillPoints.length);
    expect(summary.effects.call1.moreThanOnce + summary.effects.call2.moreThanOnce).toBe(0);
  }, 600_000);
});
