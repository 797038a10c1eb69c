import { describe, expect, test } from "vitest";
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  IDLE_TIMEOUT_VARIABLE,
  idleTimeoutFromEnv,
  parseDuration,
  parseIdleTimeout,
  ToolCallLedger,
} from "../src/index.js";
import { FakeClock } from "./support/fake-clock.js";

describe("parseDuration", () => {
  test.each([
    ["45", 45_000],
    [" 2.5s ", 2_500],
    ["250ms", 250],
    ["2m", 120_000],
    ["0", 0],
  ])("%j is %i ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  test.each(["", "soon", "-1", "5h", "1e3"])("%j is not a duration", (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe("parseIdleTimeout", () => {
  test.each([
    ["45", 45_000],
    ["45s", 45_000],
    ["5s", 5_000],
    ["250ms", 250],
    ["2m", 120_000],
    ["1.5s", 1_500],
    [" 45 ", 45_000],
    ["0", 0],
    ["0ms", 0],
    ["0.0001s", 1],
  ])("%j is %i ms", (raw, timeoutMs) => {
    expect(parseIdleTimeout(raw)).toEqual({ ok: true, timeoutMs });
  });

  test.each([[undefined], [""], ["   "]])("%j gives the 90 s default", (raw) => {
    expect(parseIdleTimeout(raw)).toEqual({ ok: true, timeoutMs: DEFAULT_IDLE_TIMEOUT_MS });
    expect(DEFAULT_IDLE_TIMEOUT_MS).toBe(90_000);
  });

  test.each([["abc"], ["-5"], ["5h"], ["5 s"], ["1e3"], ["Infinity"], ["45S"], ["ms"], [".5s"]])(
    "%j is refused with a message naming the variable and the value",
    (raw) => {
      const parsed = parseIdleTimeout(raw);
      expect(parsed.ok).toBe(false);
      if (parsed.ok) return;
      expect(parsed.error).toContain("CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT=");
      expect(parsed.error).toContain(JSON.stringify(raw));
      expect(parsed.error).toMatch(/45.*250ms.*2m.*0/);
    },
  );

  test("a value beyond what a timer can wait is refused, not silently shortened", () => {
    const parsed = parseIdleTimeout("30000000s");
    expect(parsed).toEqual({ ok: false, error: expect.stringContaining("too long") });
  });

  test("reads the variable from the environment it is given", () => {
    expect(IDLE_TIMEOUT_VARIABLE).toBe("CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT");
    expect(idleTimeoutFromEnv({ CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT: "2m" })).toEqual({
      ok: true,
      timeoutMs: 120_000,
    });
    expect(idleTimeoutFromEnv({})).toEqual({ ok: true, timeoutMs: 90_000 });
    expect(idleTimeoutFromEnv({ CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT: "soon" }).ok).toBe(false);
  });
});

describe("ledger configuration", () => {
  const base = { clock: new FakeClock(), sink: () => {} };

  test.each([[-1], [1.5], [Number.NaN], [2 ** 31]])(
    "idleTimeoutMs %j is refused by name",
    (idleTimeoutMs) => {
      expect(() => new ToolCallLedger({ ...base, idleTimeoutMs })).toThrow(/idleTimeoutMs must be/);
    },
  );

  test.each([
    ["emittedMs", 0],
    ["executingMs", -5],
    ["queuedMs", 0.5],
  ])("deadlines.%s = %j is refused by name", (field, value) => {
    expect(() => new ToolCallLedger({ ...base, deadlines: { [field]: value } })).toThrow(
      `deadlines.${field} must be`,
    );
  });
});
