import { describe, expect, test } from "vitest";
import { z } from "zod";
import { describeIssues, formatIssuePath, issueProblems, LogRecord } from "../src/index.js";

const Input = z.strictObject({
  timeoutSeconds: z.int().min(1).max(60).optional(),
  cursor: z.string().min(1, "cursor must not be empty"),
  env: z.record(z.string().regex(/^[A-Z]+$/, "names are capitals"), z.string()).optional(),
  steps: z
    .array(z.union([z.strictObject({ text: z.string() }), z.strictObject({ wait: z.number() })]))
    .optional(),
});

function issuesOf(value: unknown, reportInput = true) {
  const parsed = Input.safeParse(value, { reportInput });
  if (parsed.success) throw new Error("expected a refusal");
  return parsed.error.issues;
}

describe("describeIssues", () => {
  test.each([
    [{ cursor: "c", timeoutSeconds: "30" }, 'timeoutSeconds: must be a number, got the string "30"'],
    [{ cursor: "c", timeoutSeconds: 1.5 }, "timeoutSeconds: must be an integer, got the number 1.5"],
    [{ cursor: "c", timeoutSeconds: 0 }, "timeoutSeconds: must be at least 1"],
    [{ cursor: "c", timeoutSeconds: 61 }, "timeoutSeconds: must be at most 60"],
    [{}, "cursor: is required (string)"],
    [{ cursor: "" }, "cursor: cursor must not be empty"],
    [{ cursor: "c", sinse: 1 }, "sinse: is not allowed"],
  ])("%j reads %s", (value, expected) => {
    expect(describeIssues(issuesOf(value))).toBe(expected);
  });

  test("names record keys dotted and array items in brackets", () => {
    const problems = issueProblems(
      issuesOf({ cursor: "c", env: { lower: "x" }, steps: [{ text: "a" }, { nope: 1 }] }),
    );
    expect(problems.map((problem) => problem.field)).toEqual(["env.lower", "steps[1]"]);
  });

  test("a union names the branch that got furthest", () => {
    const text = describeIssues(issuesOf({ cursor: "c", steps: [{ wait: "soon" }] }));
    expect(text).toMatch(/^steps\[0\]: /);
  });

  test("the root, a prefix and the unknown-key wording are the caller's", () => {
    const notObject = Input.safeParse(3, { reportInput: true });
    expect(describeIssues(notObject.error!.issues, { root: "arguments" })).toBe(
      "arguments: must be an object, got the integer 3",
    );
    expect(
      describeIssues(issuesOf({ cursor: "c", colour: 1 }), {
        prefix: "session",
        unknownKey: "is not an argument of this tool",
      }),
    ).toBe("session.colour: is not an argument of this tool");
  });

  test("without reportInput a missing and a wrong value keep zod's own words", () => {
    expect(describeIssues(issuesOf({ cursor: 1 }, false))).toMatch(/^cursor: Invalid input/);
  });

  test("formatIssuePath", () => {
    expect(formatIssuePath(["steps", 0, "response", "events", 1, "type"])).toBe(
      "steps[0].response.events[1].type",
    );
    expect(formatIssuePath([])).toBe("");
  });
});

describe("LogRecord", () => {
  test("takes the one field schema and keeps the caller's fields", () => {
    const line = {
      time: "2025-01-01T00:00:00.000Z",
      level: "info",
      component: "floot-daemon",
      message: "x",
      turn: "t1",
    };
    expect(LogRecord.parse(line)).toEqual(line);
    expect(LogRecord.safeParse({ ...line, level: "loud" }).success).toBe(false);
    expect(LogRecord.safeParse({ at: line.time, level: "info", msg: "x" }).success).toBe(false);
  });
});
