import { describe, expect, test } from "vitest";
import { RenameSessionRequest, SessionSearchQuery, SessionTitle } from "../src/index.js";

const problems = (result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}) => result.error?.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`) ?? [];

describe("SessionTitle", () => {
  test("trims, and keeps any printable text up to 200 characters", () => {
    expect(SessionTitle.parse("  Überarbeitung — 修正 🚀  ")).toBe("Überarbeitung — 修正 🚀");
    expect(SessionTitle.parse("x".repeat(200))).toHaveLength(200);
  });

  test("names the control character and where it is: C0, DEL, C1 and the line separators", () => {
    for (const [title, code, at] of [
      ["a\nb", "U+000A", 2],
      ["tab\there", "U+0009", 4],
      ["del\u007f", "U+007F", 4],
      ["next\u0085line", "U+0085", 5],
      ["line\u2028sep", "U+2028", 5],
    ] as const) {
      expect(problems(SessionTitle.safeParse(title))).toEqual([
        `: title must not contain control characters (${code} at character ${at})`,
      ]);
    }
  });

  test("refuses an empty, a too long, or a non-string title, and an unknown field beside it", () => {
    expect(problems(SessionTitle.safeParse(" \u3000 "))).toEqual([": title must not be empty"]);
    expect(problems(SessionTitle.safeParse("x".repeat(201)))).toEqual([
      ": title must be at most 200 characters",
    ]);
    expect(problems(SessionTitle.safeParse(7))).toEqual([": title must be a string"]);
    expect(RenameSessionRequest.safeParse({ title: "ok", extra: 1 }).success).toBe(false);
  });
});

test("SessionSearchQuery bounds the query and the page size", () => {
  expect(SessionSearchQuery.parse({ query: " kernel ", limit: 50 })).toEqual({ query: "kernel", limit: 50 });
  expect(problems(SessionSearchQuery.safeParse({ query: "", limit: 51 }))).toEqual([
    "query: query must not be empty",
    "limit: Too big: expected number to be <=50",
  ]);
  expect(problems(SessionSearchQuery.safeParse({ query: "x".repeat(501) }))).toEqual([
    "query: query must be at most 500 characters",
  ]);
});
