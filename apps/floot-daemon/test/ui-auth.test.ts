import { createHmac, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { UiPublicKey } from "@bridgeworks/protocol";
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

/** A page's key pair, as ui/src/credential.ts makes one (P-256); the public half as the page sends it. */
function pageKey(): { privateKey: KeyObject; publicKey: UiPublicKey } {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { x, y } = publicKey.export({ format: "jwk" });
  return { privateKey, publicKey: { kty: "EC", crv: "P-256", x: x!, y: y! } };
}

/** What the page signs for an access token (ui/src/credential.ts): WebCrypto's ECDSA output is r‖s. */
function signed(privateKey: KeyObject, pageOrigin: string, nonce: string): string {
  const message = Buffer.from(`floot-ui-access\n${pageOrigin}\n${nonce}`);
  return sign("sha256", message, { key: privateKey, dsaEncoding: "ieee-p1363" }).toString("base64url");
}

/** The page's whole exchange: a challenge, signed, traded for an access token (undefined when refused). */
function access(auth: UiAuth, token: string, key: KeyObject, on = origin): string | undefined {
  const challenge = auth.challenge(token, on);
  if (challenge === undefined) return undefined;
  return auth.grantAccess(token, on, challenge.nonce, signed(key, on, challenge.nonce))?.accessToken;
}

/** A sign-in on `on` with a fresh key: its token and private key. */
async function signIn(auth: UiAuth, on = origin) {
  const key = pageKey();
  const credential = (await auth.redeemLoginCode(auth.mintLoginCode().code, on, key.publicKey))!;
  return { ...credential, key: key.privateKey };
}

/** What the page computes (ui/src/credential.ts) to check the daemon's answer. */
function expectedProof(identityKey: string, pageOrigin: string, nonce: string): string {
  return createHmac("sha256", Buffer.from(identityKey, "base64url"))
    .update(`${pageOrigin}\n${nonce}`)
    .digest("base64url");
}

describe("web UI sign-in", () => {
  test("a code is single use and trades, with the page's public key, for a token bound to the origin it was redeemed on", async () => {
    const now = { value: Date.parse("2026-11-30T12:00:00Z") };
    const auth = world(now);
    const { code, expiresAt } = auth.mintLoginCode();
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(expiresAt).toBe("2026-11-30T12:01:00.000Z");
    const key = pageKey();
    const credential = (await auth.redeemLoginCode(code, origin, key.publicKey))!;
    expect(credential.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(credential.origin).toBe(origin);
    const accessToken = access(auth, credential.token, key.privateKey)!;
    expect(auth.isAccess(accessToken, origin)).toBe(true);
    // Another port of the same host is another origin: neither token is worth anything there.
    expect(auth.isAccess(accessToken, "http://127.0.0.1:4101")).toBe(false);
    expect(auth.isAccess(accessToken, "http://localhost:4100")).toBe(false);
    expect(auth.challenge(credential.token, "http://127.0.0.1:4101")).toBeUndefined();
    expect(auth.challenge(credential.token, "http://localhost:4100")).toBeUndefined();
    expect(await auth.redeemLoginCode(code, origin, key.publicKey)).toBeUndefined();
    expect(auth.isAccess("x".repeat(43), origin)).toBe(false);
    expect(auth.isAccess(undefined, origin)).toBe(false);
  });

  test("the stored token opens nothing by itself: /v1 takes only an access token", async () => {
    const auth = world({ value: Date.now() });
    const { token, sessionId, identityKey } = await signIn(auth);
    for (const stored of [token, sessionId, identityKey]) expect(auth.isAccess(stored, origin)).toBe(false);
  });

  test("a sign-in without a P-256 public key is refused, its code used up", async () => {
    const auth = world({ value: Date.now() });
    const { code } = auth.mintLoginCode();
    const { publicKey } = pageKey();
    // A point off the curve.
    expect(await auth.redeemLoginCode(code, origin, { ...publicKey, y: publicKey.x })).toBeUndefined();
    expect(await auth.redeemLoginCode(code, origin, publicKey)).toBeUndefined();
  });

  test("a replayed nonce is refused: each challenge answers once, whatever the outcome", async () => {
    const auth = world({ value: Date.now() });
    const { token, key } = await signIn(auth);
    const { nonce } = auth.challenge(token, origin)!;
    const signature = signed(key, origin, nonce);
    expect(auth.grantAccess(token, origin, nonce, signature)).toBeDefined();
    expect(auth.grantAccess(token, origin, nonce, signature)).toBeUndefined();
    // A refused attempt uses the nonce up too: the right signature afterwards is too late.
    const second = auth.challenge(token, origin)!;
    expect(auth.grantAccess(token, origin, second.nonce, "A".repeat(86))).toBeUndefined();
    expect(auth.grantAccess(token, origin, second.nonce, signed(key, origin, second.nonce))).toBeUndefined();
    // A nonce the daemon never issued, signed by the right key.
    const madeUp = "n".repeat(43);
    expect(auth.grantAccess(token, origin, madeUp, signed(key, origin, madeUp))).toBeUndefined();
  });

  test("a signature by another key is refused, as is one sign-in's nonce for another", async () => {
    const auth = world({ value: Date.now() });
    const victim = await signIn(auth);
    const thief = await signIn(auth);
    const { nonce } = auth.challenge(victim.token, origin)!;
    // The victim's token with a key of the thief's own (or any key but the one registered).
    expect(auth.grantAccess(victim.token, origin, nonce, signed(thief.key, origin, nonce))).toBeUndefined();
    expect(
      auth.grantAccess(victim.token, origin, nonce, signed(pageKey().privateKey, origin, nonce)),
    ).toBeUndefined();
    // The thief's own sign-in cannot spend the victim's nonce, nor the victim its.
    const victims = auth.challenge(victim.token, origin)!;
    expect(
      auth.grantAccess(thief.token, origin, victims.nonce, signed(thief.key, origin, victims.nonce)),
    ).toBeUndefined();
  });

  test("a signature over another origin is refused, and a nonce asked for on one origin is not spent on another", async () => {
    const auth = world({ value: Date.now() });
    const { token, key } = await signIn(auth);
    const { nonce } = auth.challenge(token, origin)!;
    expect(
      auth.grantAccess(token, origin, nonce, signed(key, "http://127.0.0.1:4101", nonce)),
    ).toBeUndefined();
    const next = auth.challenge(token, origin)!;
    expect(
      auth.grantAccess(
        token,
        "http://localhost:4100",
        next.nonce,
        signed(key, "http://localhost:4100", next.nonce),
      ),
    ).toBeUndefined();
    // The same sign-in, signing its own origin, still gets in.
    expect(access(auth, token, key)).toBeDefined();
  });

  test("a challenge, an access token and a sign-in expire", async () => {
    const now = { value: Date.parse("2026-11-30T12:00:00Z") };
    stateDir = mkdtempSync(join(tmpdir(), "floot-ui-auth-"));
    const auth = new UiAuth({
      stateDir,
      now: () => now.value,
      sessionTtlMs: 3_600_000,
      challengeTtlMs: 60_000,
      accessTtlMs: 600_000,
    });
    const { token, key } = await signIn(auth);
    const late = auth.challenge(token, origin)!;
    expect(late.expiresAt).toBe("2026-11-30T12:01:00.000Z");
    now.value += 60_001;
    expect(auth.grantAccess(token, origin, late.nonce, signed(key, origin, late.nonce))).toBeUndefined();
    const accessToken = access(auth, token, key)!;
    now.value += 599_999;
    expect(auth.isAccess(accessToken, origin)).toBe(true);
    now.value += 1;
    expect(auth.isAccess(accessToken, origin)).toBe(false);
    // An access token never outlives its sign-in.
    const lastOne = access(auth, token, key)!;
    now.value = Date.parse("2026-11-30T12:00:00Z") + 3_600_000;
    expect(auth.isAccess(lastOne, origin)).toBe(false);
    expect(auth.challenge(token, origin)).toBeUndefined();
  });

  test("a code expires", async () => {
    const now = { value: Date.parse("2026-11-30T12:00:00Z") };
    const auth = world(now);
    const late = auth.mintLoginCode();
    now.value += 60_001;
    expect(await auth.redeemLoginCode(late.code, origin, pageKey().publicKey)).toBeUndefined();
  });

  test("a refused code says why: used already, expired, or never issued by this process (a restart forgets codes)", async () => {
    const now = { value: Date.parse("2026-11-30T12:00:00Z") };
    const auth = world(now);
    const used = auth.mintLoginCode();
    const late = auth.mintLoginCode();
    expect(await auth.redeemLoginCode(used.code, origin, pageKey().publicKey)).toBeDefined();
    expect(await auth.redeemLoginCode(used.code, origin, pageKey().publicKey)).toBeUndefined();
    expect(auth.loginCodeRefusal(used.code)).toBe("sign_in_link_used");
    now.value += 60_001;
    expect(await auth.redeemLoginCode(late.code, origin, pageKey().publicKey)).toBeUndefined();
    expect(auth.loginCodeRefusal(late.code)).toBe("sign_in_link_expired");
    // Still told apart an hour later; a code never minted is unknown.
    now.value += 3_600_000;
    expect(auth.loginCodeRefusal(used.code)).toBe("sign_in_link_used");
    expect(auth.loginCodeRefusal(late.code)).toBe("sign_in_link_expired");
    expect(auth.loginCodeRefusal("A".repeat(43))).toBe("sign_in_link_unknown");
    const restarted = new UiAuth({ stateDir: stateDir!, now: () => now.value });
    expect(restarted.loginCodeRefusal(used.code)).toBe("sign_in_link_unknown");
    // A spent code is remembered for a day, then it is just unknown.
    now.value += 24 * 3_600_000;
    expect(auth.loginCodeRefusal(used.code)).toBe("sign_in_link_unknown");
  });

  test("sign-ins and the daemon key survive a restart (0600, digests and public keys only); codes, nonces and access tokens do not", async () => {
    const now = { value: Date.now() };
    const auth = world(now);
    const pending = auth.mintLoginCode();
    const credential = await signIn(auth);
    const accessToken = access(auth, credential.token, credential.key)!;
    const { nonce } = auth.challenge(credential.token, origin)!;
    const path = join(stateDir!, uiSessionsFileName);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateDir!, daemonKeyFileName)).mode & 0o777).toBe(0o600);
    const stored = readFileSync(path, "utf8");
    for (const secret of [credential.token, accessToken, nonce]) expect(stored).not.toContain(secret);
    const restarted = new UiAuth({ stateDir: stateDir! });
    expect(restarted.isAccess(accessToken, origin)).toBe(false);
    expect(
      restarted.grantAccess(credential.token, origin, nonce, signed(credential.key, origin, nonce)),
    ).toBeUndefined();
    expect(await restarted.redeemLoginCode(pending.code, origin, pageKey().publicKey)).toBeUndefined();
    // The page reattaches with no new sign-in: a new signature gets a new access token.
    expect(restarted.isAccess(access(restarted, credential.token, credential.key), origin)).toBe(true);
    // The same daemon (same key) answers the page's challenge after the restart.
    const identityNonce = "n".repeat(43);
    expect(restarted.prove(credential.sessionId, origin, identityNonce)).toBe(
      expectedProof(credential.identityKey, origin, identityNonce),
    );
  });

  test("a sign-in stored without a public key (before keys) is dropped at load", async () => {
    const auth = world({ value: Date.now() });
    const { token } = await signIn(auth);
    const path = join(stateDir!, uiSessionsFileName);
    const stored = JSON.parse(readFileSync(path, "utf8")) as { sessions: Record<string, unknown>[] };
    writeFileSync(
      path,
      JSON.stringify({ sessions: stored.sessions.map(({ publicKey: _, ...rest }) => rest) }),
    );
    expect(new UiAuth({ stateDir: stateDir! }).challenge(token, origin)).toBeUndefined();
  });

  test("only the daemon's key answers the identity challenge, and only for the page's own origin", async () => {
    const auth = world({ value: Date.now() });
    const credential = await signIn(auth);
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

  test("a taken port revokes its sign-ins (both origins, persisted) and their access tokens; the others stay", async () => {
    const auth = world({ value: Date.now() });
    const onIp = await signIn(auth, origin);
    const onName = await signIn(auth, "http://localhost:4100");
    const elsewhere = await signIn(auth, "http://127.0.0.1:4200");
    const liveAccess = access(auth, onIp.token, onIp.key)!;
    expect(await auth.revokePort(4100)).toBe(2);
    expect(auth.isAccess(liveAccess, origin)).toBe(false);
    const restarted = new UiAuth({ stateDir: stateDir! });
    for (const each of [auth, restarted]) {
      expect(each.challenge(onIp.token, origin)).toBeUndefined();
      expect(each.challenge(onName.token, "http://localhost:4100")).toBeUndefined();
      expect(access(each, elsewhere.token, elsewhere.key, "http://127.0.0.1:4200")).toBeDefined();
    }
    expect(await auth.revokePort(4100)).toBe(0);
  });

  test("a taken [::1] revokes the sign-ins of localhost on that port only", async () => {
    const auth = world({ value: Date.now() });
    const onIp = await signIn(auth, origin);
    const onName = await signIn(auth, "http://localhost:4100");
    expect(await auth.revokeOrigin("http://localhost:4100")).toBe(1);
    expect(auth.challenge(onName.token, "http://localhost:4100")).toBeUndefined();
    expect(access(auth, onIp.token, onIp.key)).toBeDefined();
  });

  test("a daemon bound to a port keeps only that port's sign-ins, persisted", async () => {
    const auth = world({ value: Date.now() });
    const old = await signIn(auth, origin);
    const current = await signIn(auth, "http://localhost:4200");
    expect(await auth.retainPort(4200)).toBe(1);
    const restarted = new UiAuth({ stateDir: stateDir! });
    expect(restarted.challenge(old.token, origin)).toBeUndefined();
    expect(access(restarted, current.token, current.key, "http://localhost:4200")).toBeDefined();
    expect(await restarted.retainPort(4200)).toBe(0);
  });

  test("a daemon key that is not 0600 is refused", () => {
    stateDir = mkdtempSync(join(tmpdir(), "floot-ui-auth-"));
    writeFileSync(join(stateDir, daemonKeyFileName), `${"a".repeat(64)}\n`, { mode: 0o644 });
    expect(() => new UiAuth({ stateDir: stateDir! })).toThrow(/0600/);
  });
});
