import type { Backend } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { runTorture } from "./torture/harness.js";

// The scenario of issue 11, as a new user met it: 3000 sessions in the journal, eight clients polling
// GET /v1/overview (at the web UI's own rate, each 2.5 s after its last answer: a daemon that answers
// one overview in about a second is busy most of the time), a turn runs `echo … >> file`, and the
// daemon is SIGKILLed the instant the line lands. Before the gate the stream's tool_use was journaled only when the loaded daemon read it, so
// the turn looked effect-free and was replayed: the line was written twice.

describe.each<Backend>(["claude", "codex"])("SIGKILL at the side effect under load: %s", (backend) => {
  test("after recovery the side effect exists exactly once, in every trial", async () => {
    const trials = 3;
    const summary = await runTorture({
      backend,
      trials,
      seed: 3,
      points: ["after-effect"],
      afterEffectLines: 1,
      sessions: 3000,
      pollers: 8,
      // The overview is one page now, so it is cheap: the pollers ask without the UI's 2.5 s pause to
      // keep the daemon busy.
      pollPauseMs: 250,
      followers: 2,
    });
    expect(summary.violations).toEqual([]);
    expect(summary.kills["after-effect"]).toEqual({ planned: trials, fired: trials });
    expect(summary.effects.call1).toEqual({ once: trials, never: 0, moreThanOnce: 0 });
    // The loaded daemon was really polled throughout.
    expect(summary.load.overviewPolls).toBeGreaterThan(trials * 8);
  }, 900_000);
});
