import { describe, expect, test } from "vitest";
import { LegacyRunFile, RetireOutcome, RunFile, retireOutcomeHttpStatus } from "../src/index.js";
import { failedPaths } from "./issues.js";

const token = "a".repeat(64);

describe("run file", () => {
  test("accepts {port, token, pid, startTime}", () => {
    const runFile = { port: 43121, token, pid: 4242, startTime: "987654" };
    expect(RunFile.parse(runFile)).toEqual(runFile);
  });

  test.each([
    [{ port: 0, token, pid: 1, startTime: "1" }, "port"],
    [{ port: 70000, token, pid: 1, startTime: "1" }, "port"],
    [{ port: 1, token: "short", pid: 1, startTime: "1" }, "token"],
    [{ port: 1, token: "A".repeat(64), pid: 1, startTime: "1" }, "token"],
    [{ port: 1, token, pid: -3, startTime: "1" }, "pid"],
    [{ port: 1, token, pid: 1.5, startTime: "1" }, "pid"],
    [{ port: 1, token, pid: 1, startTime: "" }, "startTime"],
    [{ port: 1, token, pid: 1 }, "startTime"],
  ])("refuses %j naming %s", (value, field) => {
    expect(failedPaths(RunFile, value)).toEqual([field]);
  });

  test("refuses extra keys, so nothing else is ever written beside the token", () => {
    expect(RunFile.safeParse({ port: 1, token, pid: 1, startTime: "1", env: {} }).success).toBe(false);
  });

  test("the legacy shape is exactly the old {port, token, pid}, and no current run file is one", () => {
    expect(LegacyRunFile.safeParse({ port: 1, token, pid: 1 }).success).toBe(true);
    expect(LegacyRunFile.safeParse({ port: 1, token, pid: 1, startTime: "1" }).success).toBe(false);
  });
});

describe("retire outcome", () => {
  test("accepts each status and maps it to its HTTP status", () => {
    const done = RetireOutcome.parse({
      status: "done",
      retired: "agent:a#00000000",
      current: "agent:a#11111111",
    });
    expect(retireOutcomeHttpStatus[done.status]).toBe(200);
    expect(retireOutcomeHttpStatus[RetireOutcome.parse({ status: "running" }).status]).toBe(202);
    expect(
      retireOutcomeHttpStatus[RetireOutcome.parse({ status: "failed", error: "board locked" }).status],
    ).toBe(500);
  });

  test("refuses a done outcome whose identities are malformed, naming the field", () => {
    expect(failedPaths(RetireOutcome, { status: "done", retired: "a", current: "agent:a#11111111" })).toEqual(
      ["retired"],
    );
    expect(failedPaths(RetireOutcome, { status: "unknown" })).toEqual(["status"]);
  });
});
