import { describe, expect, test } from "vitest";
import { builtOnce } from "../src/built-once.js";

describe("builtOnce", () => {
  test("builds nothing until the first call, then once, and returns that same value to every call", () => {
    let builds = 0;
    const value = builtOnce(() => {
      builds += 1;
      return { built: builds };
    });
    expect(builds).toBe(0);
    const first = value();
    expect(value()).toBe(first);
    expect(first).toEqual({ built: 1 });
    expect(builds).toBe(1);
  });

  test("a build that returns undefined is not run again", () => {
    let builds = 0;
    const value = builtOnce(() => {
      builds += 1;
      return undefined;
    });
    value();
    value();
    expect(builds).toBe(1);
  });
});
