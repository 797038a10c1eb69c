import { describe, expect, test } from "vitest";
import { isPidAlive } from "../src/index.js";
import { deadPid } from "./helpers.js";

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(code), { code });
}

describe("isPidAlive", () => {
  test("true for this process, false for one that exited", async () => {
    expect(isPidAlive(process.pid)).toBe(true);
    expect(isPidAlive(await deadPid())).toBe(false);
  });

  test("EPERM means the process exists under another user: alive", () => {
    expect(
      isPidAlive(1234, () => {
        throw errno("EPERM");
      }),
    ).toBe(true);
    expect(
      isPidAlive(1234, () => {
        throw errno("ESRCH");
      }),
    ).toBe(false);
  });

  test("refuses pids that would address process groups", () => {
    for (const pid of [0, -1, -1234, 1.5, Number.NaN]) {
      expect(() => isPidAlive(pid, () => {}), String(pid)).toThrow(RangeError);
    }
  });
});
