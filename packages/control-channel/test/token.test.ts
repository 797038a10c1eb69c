import { randomBytes } from "node:crypto";
import { ControlToken } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { mintToken, tokenMatcher, tokensEqual } from "../src/index.js";

describe("mintToken", () => {
  test("is 32 bytes from the CSPRNG as 64 lowercase hex characters", () => {
    const token = mintToken(randomBytes);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(ControlToken.safeParse(token).success).toBe(true);
    expect(mintToken(randomBytes)).not.toBe(token);
  });

  test("asks the injected source for exactly 32 bytes and encodes them", () => {
    const sizes: number[] = [];
    const token = mintToken((size) => {
      sizes.push(size);
      return Uint8Array.from({ length: size }, (_, index) => index);
    });
    expect(sizes).toEqual([32]);
    expect(token).toBe(Buffer.from(Array.from({ length: 32 }, (_, index) => index)).toString("hex"));
  });

  test("refuses a source that returns the wrong number of bytes", () => {
    expect(() => mintToken(() => new Uint8Array(16))).toThrow(/16 bytes, expected 32/);
  });
});

describe("tokensEqual", () => {
  const token = mintToken(randomBytes);
  const lastFlipped = `${token.slice(0, -1)}${token.endsWith("0") ? "1" : "0"}`;

  test("true for the same token", () => {
    expect(tokensEqual(token, `${token}`)).toBe(true);
  });

  test("false for a token differing in one character, in case, or in length", () => {
    expect(tokensEqual(token, lastFlipped)).toBe(false);
    expect(tokensEqual("ab".repeat(32), "AB".repeat(32))).toBe(false);
    expect(tokensEqual(token, token.slice(0, -1))).toBe(false);
    expect(tokensEqual(token, `${token}0`)).toBe(false);
    expect(tokensEqual(token, "")).toBe(false);
    expect(tokensEqual("", token)).toBe(false);
  });
});

describe("tokenMatcher", () => {
  const token = mintToken(randomBytes);
  const matches = tokenMatcher(token);

  test("matches the expected token, and only it, however often it is asked", () => {
    expect(matches(`${token}`)).toBe(true);
    expect(matches(`${token.slice(0, -1)}${token.endsWith("0") ? "1" : "0"}`)).toBe(false);
    expect(matches(token.toUpperCase())).toBe(token === token.toUpperCase());
    expect(matches(token.slice(0, -1))).toBe(false);
    expect(matches("")).toBe(false);
    expect(matches(token)).toBe(true);
  });

  test("another matcher's token does not match", () => {
    expect(tokenMatcher(mintToken(randomBytes))(token)).toBe(false);
  });
});
