import { describe, expect, test } from "vitest";
import { duration, UsageError } from "../src/index.js";

describe("duration", () => {
  const parse = duration(2_147_483_647);

  test.each([
    ["500ms", 500],
    ["30s", 30_000],
    ["5m", 300_000],
    ["2h", 7_200_000],
  ])("%s is %d ms", (raw, ms) => {
    expect(parse(raw, "--timeout")).toBe(ms);
  });

  test.each(["", "30", "0s", "1.5s", "-1s", "5 m", "3d", "s", "999999999h"])(
    "%j is a usage error naming the option",
    (raw) => {
      expect(() => parse(raw, "--timeout")).toThrow(UsageError);
      expect(() => parse(raw, "--timeout")).toThrow(/^--timeout: must be a duration/);
    },
  );
});
