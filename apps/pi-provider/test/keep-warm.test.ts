import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import {
  affordableSideQuestions,
  claudeCacheTtlMs,
  KEEP_WARM_QUESTION,
  KeepWarm,
  type KeepWarmHooks,
  type KeepWarmOutcome,
  keepWarmEveryMs,
  keepWarmFromEnv,
} from "../src/keep-warm.js";

describe("CLAUDE_BRIDGE_KEEP_WARM", () => {
  test.each([
    [undefined, { kind: "auto" }],
    ["on", { kind: "auto" }],
    ["0", { kind: "off" }],
    ["off", { kind: "off" }],
    ["90s", { kind: "every", everyMs: 90_000 }],
    ["2500ms", { kind: "every", everyMs: 2_500 }],
  ])("%j is %j", (value, setting) => {
    expect(keepWarmFromEnv(value === undefined ? {} : { CLAUDE_BRIDGE_KEEP_WARM: value })).toEqual({
      ok: true,
      setting,
    });
  });

  test("a bad value is named, and the cache is kept warm automatically", () => {
    expect(keepWarmFromEnv({ CLAUDE_BRIDGE_KEEP_WARM: "sometimes" })).toEqual({
      ok: false,
      setting: { kind: "auto" },
      error: expect.stringContaining(
        'CLAUDE_BRIDGE_KEEP_WARM must be on, off or a duration (4m, 90s, 2500ms); got "sometimes"',
      ),
    });
  });

  test("the automatic interval follows Claude Code's cache lifetime: 1 hour on a subscription, else 5 minutes", () => {
    expect(claudeCacheTtlMs({}, true, false)).toBe(3_600_000);
    expect(claudeCacheTtlMs({}, false, false)).toBe(300_000);
    expect(claudeCacheTtlMs({}, true, true)).toBe(300_000);
    expect(claudeCacheTtlMs({ FORCE_PROMPT_CACHING_5M: "1" }, true, false)).toBe(300_000);
    expect(claudeCacheTtlMs({ CLAUDE_CODE_PROMPT_CACHE_TTL: "1h" }, false, false)).toBe(3_600_000);
    expect(claudeCacheTtlMs({ ENABLE_PROMPT_CACHING_1H: "1" }, false, false)).toBe(3_600_000);
    expect(keepWarmEveryMs({ kind: "auto" }, 300_000)).toBe(270_000);
    expect(keepWarmEveryMs({ kind: "every", everyMs: 1_000 }, 300_000)).toBe(1_000);
    expect(keepWarmEveryMs({ kind: "off" }, 300_000)).toBeUndefined();
  });

  test("automatic: no more side questions per wait than the rebuild they avoid would cost", () => {
    // 50k prompt tokens: a 5-minute rebuild writes 62,500 input-token equivalents; a side question reads
    // 5,000 plus its 500 overhead.
    expect(affordableSideQuestions(50_000, 300_000)).toBe(11);
    expect(affordableSideQuestions(50_000, 3_600_000)).toBe(18);
    expect(affordableSideQuestions(1_900, 300_000)).toBe(3);
    // A prompt this small is cheaper to write again than to keep.
    expect(affordableSideQuestions(300, 300_000)).toBe(0);
    expect(affordableSideQuestions(undefined, 300_000)).toBeUndefined();
  });
});

describe("KeepWarm", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function keepWarm(overrides: Partial<KeepWarmHooks> = {}) {
    const outcomes: KeepWarmOutcome[] = [];
    const asked: string[] = [];
    const warm = new KeepWarm({
      everyMs: () => 1_000,
      allowed: () => true,
      budget: () => undefined,
      ask: async (question) => {
        asked.push(question);
      },
      report: (outcome) => outcomes.push(outcome),
      now: () => Date.now(),
      ...overrides,
    });
    return { warm, outcomes, asked };
  }

  test("asks every interval while Claude Code waits on tools, and never once it stopped", async () => {
    const { warm, outcomes, asked } = keepWarm();
    warm.start();
    await vi.advanceTimersByTimeAsync(999);
    expect(asked).toEqual([]);
    await vi.advanceTimersByTimeAsync(2_001);
    expect(asked).toEqual([KEEP_WARM_QUESTION, KEEP_WARM_QUESTION, KEEP_WARM_QUESTION]);
    expect(outcomes).toEqual([
      { outcome: "sent", ms: 0 },
      { outcome: "sent", ms: 0 },
      { outcome: "sent", ms: 0 },
    ]);
    warm.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(asked).toHaveLength(3);
  });

  test("asks at most the wait's budget of side questions", async () => {
    const { warm, asked } = keepWarm({ budget: () => 2 });
    warm.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(asked).toHaveLength(2);
    warm.stop();
    warm.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(asked).toHaveLength(3);
    warm.stop();
  });

  test("asks nothing the spending guard would refuse, nor without side questions; a failure is reported", async () => {
    const refused = keepWarm({ allowed: () => false });
    refused.warm.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(refused.asked).toEqual([]);
    expect(refused.outcomes).toEqual([{ outcome: "refused" }]);
    refused.warm.stop();

    const unavailable = keepWarm({ ask: undefined });
    unavailable.warm.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(unavailable.outcomes).toEqual([{ outcome: "unavailable" }]);

    const failing = keepWarm({ ask: () => Promise.reject(new Error("Session is shutting down")) });
    failing.warm.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(failing.outcomes).toEqual([{ outcome: "failed", ms: 0, detail: "Session is shutting down" }]);
    failing.warm.stop();
  });
});
