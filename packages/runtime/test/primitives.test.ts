import { describe, expect, test } from "vitest";
import { z } from "zod";
import {
  describeError,
  mcpErrorResult,
  mcpJsonResult,
  parseToolArguments,
  toError,
  xdgRuntimeDir,
  xdgStateHome,
} from "../src/index.js";

describe("describeError", () => {
  test("an Error's message, anything else as a string", () => {
    expect(describeError(new TypeError("bad"))).toBe("bad");
    expect(describeError("plain")).toBe("plain");
    expect(describeError(42)).toBe("42");
    expect(describeError(undefined)).toBe("undefined");
  });

  test("toError keeps an Error and wraps anything else", () => {
    const error = new RangeError("x");
    expect(toError(error)).toBe(error);
    expect(toError("y")).toEqual(new Error("y"));
  });
});

describe("XDG base dirs", () => {
  test("state home: an absolute XDG_STATE_HOME, else ~/.local/state; a relative one is ignored", () => {
    expect(xdgStateHome({ XDG_STATE_HOME: "/x/state" }, "/home/u")).toBe("/x/state");
    expect(xdgStateHome({ XDG_STATE_HOME: "rel/state" }, "/home/u")).toBe("/home/u/.local/state");
    expect(xdgStateHome({ XDG_STATE_HOME: "" }, "/home/u")).toBe("/home/u/.local/state");
    expect(xdgStateHome({}, "/home/u")).toBe("/home/u/.local/state");
  });

  test("runtime dir: an absolute XDG_RUNTIME_DIR or nothing", () => {
    expect(xdgRuntimeDir({ XDG_RUNTIME_DIR: "/run/user/1" })).toBe("/run/user/1");
    expect(xdgRuntimeDir({ XDG_RUNTIME_DIR: "run" })).toBeUndefined();
    expect(xdgRuntimeDir({})).toBeUndefined();
  });
});

describe("MCP tool results", () => {
  const Input = z.strictObject({
    timeoutSeconds: z.int().min(1).max(60).default(45),
    cursor: z.string().optional(),
  });

  test("errors and JSON values", () => {
    expect(mcpErrorResult("nope")).toEqual({ content: [{ type: "text", text: "nope" }], isError: true });
    expect(mcpJsonResult({ a: 1 })).toEqual({
      content: [{ type: "text", text: '{"a":1}' }],
      structuredContent: { a: 1 },
    });
  });

  test("arguments: null counts as absent, nothing is coerced, unknown arguments are named", () => {
    expect(parseToolArguments(Input, undefined)).toEqual({ ok: true, value: { timeoutSeconds: 45 } });
    expect(parseToolArguments(Input, { cursor: null })).toEqual({ ok: true, value: { timeoutSeconds: 45 } });
    expect(parseToolArguments(Input, { timeoutSeconds: "30" })).toEqual({
      ok: false,
      message: 'timeoutSeconds: must be a number, got the string "30"',
    });
    expect(parseToolArguments(Input, { sinse: 1 })).toEqual({
      ok: false,
      message: "sinse: is not an argument of this tool",
    });
    expect(parseToolArguments(Input, [1])).toEqual({
      ok: false,
      message: "arguments: must be a JSON object",
    });
  });
});
