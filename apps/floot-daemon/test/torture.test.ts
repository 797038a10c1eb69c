import type { Backend } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { type KillPoint, runTorture } from "./torture/harness.js";

// A small fixed sample of the crash torture run (`pnpm torture` runs hundreds of trials): one trial
// per kill point, the real CLI against the model double, a loaded journal and API clients throughout.

const sample: KillPoint[] = [
  "turn:spawned",
  "turn:event",
  "gate:received",
  "gate:committed",
  "after-effect",
  "recovery",
];

describe.each<Backend>(["claude", "codex"])("crash torture sample: %s", (backend) => {
  test("one SIGKILL at each point under load: no effect repeated or unrecorded, nothing lost, nothing left running", async () => {
    const summary = await runTorture({
      backend,
      trials: sample.length,
      seed: 11,
      points: sample,
      order: "cycle",
      sessions: 500,
      pollers: 2,
      followers: 1,
    });
    expect(summary.violations).toEqual([]);
    // Every chosen point was reached and killed the daemon there.
    for (const point of sample) expect(summary.kills[point], point).toEqual({ planned: 1, fired: 1 });
    expect(summary.effects.call1.moreThanOnce + summary.effects.call2.moreThanOnce).toBe(0);
  }, 600_000);
});
