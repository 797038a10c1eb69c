import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { daemonKeyFileName } from "../src/daemon/daemon-key.js";
import { UiAuth, uiSessionsFileName } from "../src/daemon/ui-auth.js";

let stateDir: string | undefined;
const origin = "http://127.0.0.1:4100";

afterEach(() => {
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  stateDir = undefined;
});

function world(now: { value: number }) {
  stateDir = mkdtempSync(join(tmpdir(), "floot-ui-auth-"));
  return new UiAuth({ stateDir, now: () => now.value, loginCodeTtlMs: 60_000, sessionTtlMs: 3_600_000 });
}

/** What the page computes (ui/src/credential.ts) to check the daemon's answer. */
function expectedProof(identityKey: string, pageOrigin: string, nonce: string): string {
  return createHmac("sha256", Buffer.from(identityKey, "base64url"))
    .update(`${pageOrigin}\n${nonce}`)
    .digest("base64url");
}

describe("web UI sign-in", () => {
  test("a code is single use and trades for a token bound to the origin it was redeemed on", async () => {
    const now = { value: Date.parse("2026-11-30T12:00:00Z") };
    const auth = world(now);
    const { code, expiresAt } = auth.mintLoginCode();
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(expiresAt).toBe("2026-11-30T12:01:00.000Z");
    const credential = (await auth.redeemLoginCode(code, origin))!;
    expect(credential.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(credential.origin).toBe(origin);
    expect(auth.isSession(credential.token, origin)).toBe(true);
    // Another port of the same host is another origin: the token is worth nothing there.
    expect(auth.isSession(credential.token, "http://127.0.0.1:4101")).toBe(false);
    expect(auth.isSession(credential.token, "http://localhost:4100")).toBe(false);
    expect(await auth.redeemLoginCode(code, origin)).toBeUndefined();
    expect(auth.isSession("x".repeat(43), origin)).toBe(false);
    expect(auth.isSession(undefined, origin)).toBe(false);
  });

  test("a code expires; a session expires", async () => {
    const now = { value: Date.parse("2026-11-30T12:00:00Z") };
    const auth = world(now);
    const late = auth.mintLoginCode();
    const onTime = auth.mintLoginCode();
    const { token } = (await auth.redeemLoginCode(onTime.code, origin))!;
    now.value += 60_001;
    expect(await auth.redeemLoginCode(late.code, origin)).toBeUndefined();
    expect(auth.isSession(token, origin)).toBe(true);
    now.value += 3_600_000;
    expect(auth.isSession(token, origin)).toBe(false);
  });

  test("sessions and the daemon key survive a restart (0600, digests only); codes do not", async () => {
    const now = { value: Date.now() };
    const auth = world(now);
    const pending = auth.mintLoginCode();
    const credential = (await auth.redeemLoginCode(auth.mintLoginCode().code, origin))!;
    const path = join(stateDir!, uiSessionsFileName);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateDir!, daemonKeyFileName)).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, "utf8")).not.toContain(credential.token);
    const restarted = new UiAuth({ stateDir: stateDir! });
    expect(restarted.isSession(credential.token, origin)).toBe(true);
    expect(await restarted.redeemLoginCode(pending.code, origin)).toBeUndefined();
    // The same daemon (same key) answers the page's challenge after the restart.
    const nonce = "n".repeat(43);
    expect(restarted.prove(credential.sessionId, origin, nonce)).toBe(
      expectedProof(credential.identityKey, origin, nonce),
    );
  });

  test("only the daemon's key answers the identity challenge, and only for the page's own origin", async () => {
    const auth = world({ value: Date.now() });
    const credential = (await auth.redeemLoginCode(auth.mintLoginCode().code, origin))!;
    const nonce = "m".repeat(43);
    const right = expectedProof(credential.identityKey, origin, nonce);
    expect(auth.prove(credential.sessionId, origin, nonce)).toBe(right);
    // A relay through the real daemon on another port answers for that port, not the page's.
    expect(auth.prove(credential.sessionId, "http://127.0.0.1:4101", nonce)).not.toBe(right);
    // Another state dir (another daemon, another key) cannot answer.
    const otherDir = mkdtempSync(join(tmpdir(), "floot-ui-auth-other-"));
    try {
      expect(new UiAuth({ stateDir: otherDir }).prove(credential.sessionId, origin, nonce)).not.toBe(right);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  test("a taken port revokes its tokens (both origins, persisted); the others stay", async () => {
    const auth = world({ value: Date.now() });
    const signIn = async (on: string) => (await auth.redeemLoginCode(auth.mintLoginCode().code, on))!.token;
    const onIp = await signIn(origin);
    const onName = await signIn("http://localhost:4100");
    const elsewhere = await signIn("http://127.0.0.1:4200");
    expect(await auth.revokePort(4100)).toBe(2);
    const restarted = new UiAuth({ stateDir: stateDir! });
    for (const each of [auth, restarted]) {
      expect(each.isSession(onIp, origin)).toBe(false);
      expect(each.isSession(onName, "http://localhost:4100")).toBe(false);
      expect(each.isSession(elsewhere, "http://127.0.0.1:4200")).toBe(true);
    }
    expect(await auth.revokePort(4100)).toBe(0);
  });

  test("a daemon bound to a port keeps only that port's tokens, persisted", async () => {
    const auth = world({ value: Date.now() });
    const signIn = async (on: string) => (await auth.redeemLoginCode(auth.mintLoginCode().code, on))!.token;
    const old = await signIn(origin);
    const current = await signIn("http://localhost:4200");
    expect(await auth.retainPort(4200)).toBe(1);
    const restarted = new UiAuth({ stateDir: stateDir! });
    expect(restarted.isSession(old, origin)).toBe(false);
    expect(restarted.isSession(current, "http://localhost:4200")).toBe(true);
    expect(await restarted.retainPort(4200)).toBe(0);
  });

  test("a daemon key that is not 0600 is refused", () => {
    stateDir = mkdtempSync(join(tmpdir(), "floot-ui-auth-"));
    writeFileSync(join(stateDir, daemonKeyFileName), `${"a".repeat(64)}\n`, { mode: 0o644 });
    expect(() => new UiAuth({ stateDir: stateDir! })).toThrow(/0600/);
  });
});
