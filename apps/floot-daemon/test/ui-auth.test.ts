import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { UiAuth, uiSessionsFileName } from "../src/daemon/ui-auth.js";

let stateDir: string | undefined;

afterEach(() => {
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  stateDir = undefined;
});

function world(now: { value: number }) {
  stateDir = mkdtempSync(join(tmpdir(), "floot-ui-auth-"));
  return new UiAuth({ stateDir, now: () => now.value, loginCodeTtlMs: 60_000, sessionTtlMs: 3_600_000 });
}

describe("web UI login", () => {
  test("a code is single use and trades for a session cookie", async () => {
    const now = { value: Date.parse("2026-11-30T12:00:00Z") };
    const auth = world(now);
    const { code, expiresAt } = auth.mintLoginCode();
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(expiresAt).toBe("2026-11-30T12:01:00.000Z");
    const cookie = await auth.redeemLoginCode(code);
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(auth.isSession(cookie)).toBe(true);
    expect(await auth.redeemLoginCode(code)).toBeUndefined();
    expect(auth.isSession("x".repeat(43))).toBe(false);
    expect(auth.isSession(undefined)).toBe(false);
  });

  test("a code expires; a session expires", async () => {
    const now = { value: Date.parse("2026-11-30T12:00:00Z") };
    const auth = world(now);
    const late = auth.mintLoginCode();
    const onTime = auth.mintLoginCode();
    const cookie = await auth.redeemLoginCode(onTime.code);
    now.value += 60_001;
    expect(await auth.redeemLoginCode(late.code)).toBeUndefined();
    expect(auth.isSession(cookie)).toBe(true);
    now.value += 3_600_000;
    expect(auth.isSession(cookie)).toBe(false);
  });

  test("sessions survive a daemon restart as digests only (0600); codes do not", async () => {
    const now = { value: Date.now() };
    const auth = world(now);
    const pending = auth.mintLoginCode();
    const cookie = (await auth.redeemLoginCode(auth.mintLoginCode().code))!;
    const path = join(stateDir!, uiSessionsFileName);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, "utf8")).not.toContain(cookie);
    const restarted = new UiAuth({ stateDir: stateDir! });
    expect(restarted.isSession(cookie)).toBe(true);
    expect(await restarted.redeemLoginCode(pending.code)).toBeUndefined();
  });
});
