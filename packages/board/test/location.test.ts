import { describe, expect, test } from "vitest";
import { BoardError, redactBoardLocation, resolveBoardLocation } from "../src/index.js";

describe("resolveBoardLocation", () => {
  const home = "/home/ada";

  test("defaults to ~/.local/state/bee/board.db", () => {
    expect(resolveBoardLocation({}, home)).toBe("/home/ada/.local/state/bee/board.db");
  });

  test("follows XDG_STATE_HOME when it is absolute, and ignores it otherwise", () => {
    expect(resolveBoardLocation({ XDG_STATE_HOME: "/var/state" }, home)).toBe("/var/state/bee/board.db");
    expect(resolveBoardLocation({ XDG_STATE_HOME: "state" }, home)).toBe(
      "/home/ada/.local/state/bee/board.db",
    );
    expect(resolveBoardLocation({ XDG_STATE_HOME: "" }, home)).toBe("/home/ada/.local/state/bee/board.db");
  });

  test("BEE_BOARD overrides both, and an empty one counts as unset", () => {
    const env = { BEE_BOARD: "/srv/team/board.db", XDG_STATE_HOME: "/var/state" };
    expect(resolveBoardLocation(env, home)).toBe("/srv/team/board.db");
    expect(resolveBoardLocation({ ...env, BEE_BOARD: "" }, home)).toBe("/var/state/bee/board.db");
  });

  test("refuses a relative BEE_BOARD or home dir by name", () => {
    expect(() => resolveBoardLocation({ BEE_BOARD: "board.db" }, home)).toThrowError(
      expect.objectContaining({ argument: "BEE_BOARD" }),
    );
    expect(() => resolveBoardLocation({}, "ada")).toThrowError(BoardError);
    expect(() => resolveBoardLocation({}, "ada")).toThrowError(/^homedir: /);
  });
});

describe("resolveBoardLocation with a PostgreSQL server", () => {
  test("keeps a postgres:// or postgresql:// BEE_BOARD as it is", () => {
    for (const url of ["postgres://bee@db.team:5432/bee", "postgresql://bee:pw@10.0.0.5/bee?schema=team"]) {
      expect(resolveBoardLocation({ BEE_BOARD: url }, "/home/ada")).toBe(url);
    }
    expect(() => resolveBoardLocation({ BEE_BOARD: "mysql://db/bee" }, "/home/ada")).toThrowError(
      /^BEE_BOARD: must be an absolute path or a postgres:\/\/ URL/,
    );
  });
});

describe("redactBoardLocation", () => {
  test("hides a password in the userinfo or a password parameter, and keeps a path as it is", () => {
    expect(redactBoardLocation("postgres://bee:hunter2@db.local:5432/bee?schema=team")).toBe(
      "postgres://bee:***@db.local:5432/bee?schema=team",
    );
    expect(redactBoardLocation("postgresql://db.local/bee?password=hunter2")).not.toContain("hunter2");
    expect(redactBoardLocation("/var/lib/bee/board.db")).toBe("/var/lib/bee/board.db");
  });

  test("shows only the scheme of an unparseable URL", () => {
    expect(redactBoardLocation("postgres://bee:hunter2@[::1")).toBe("postgres://(unparseable URL)");
  });
});
