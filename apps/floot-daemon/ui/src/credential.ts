import type {
  FlootApiError,
  UiAccess,
  UiChallenge,
  UiCredential,
  UiIdentityProof,
  UiPublicKey,
  UiSignInRefusal,
} from "@bridgeworks/protocol";
import { loadPageKeys, savePageKeys } from "./page-keys.js";

// The page's credential, in three parts: which sign-in this tab is (its token, in sessionStorage), the
// sign-in's keys (non-extractable, in IndexedDB: usable here, never readable out), and the access token
// `/v1` takes (in this module's memory only). The token alone opens nothing: after the daemon proved
// its identity, the page signs a nonce of the daemon's for an access token. Nothing is sent before the
// proof, and nothing ambient (no cookie) exists.

/** What this tab keeps in sessionStorage: the credential less its identity key (a CryptoKey in IndexedDB). */
export type StoredSignIn = Omit<UiCredential, "identityKey">;

const storageKey = "floot.credential";
const loginFragment = /^#login=([A-Za-z0-9_-]{43})$/;
/** An access token this close to its end is renewed before a request, not sent. */
const renewAheadMs = 30_000;

/**
 * Why this tab is not signed in: no sign-in yet, a refused link (which way), a link the daemon did not
 * answer, or a sign-in the daemon no longer knows.
 */
export type SignedOutReason = UiSignInRefusal | "no_sign_in" | "no_answer" | "sign_in_ended";

/** No credential, or the daemon refused the sign-in code or no longer knows the sign-in. */
export class NotSignedIn extends Error {
  constructor(
    message: string,
    readonly reason: SignedOutReason = "sign_in_ended",
  ) {
    super(message);
  }
}

/** Whoever answers on this port could not prove it is the daemon: nothing of value was sent to it. */
export class NotTheDaemon extends Error {}

let access: Promise<UiAccess> | undefined;

/**
 * The sign-in link is `/#login=<code>`: a fragment never reaches a server, a log or a Referer. The code is
 * taken out of the address bar at once (at load, or when the link is opened in a tab already open).
 */
export function takeLoginCode(): string | undefined {
  const match = loginFragment.exec(location.hash);
  if (match === null) return undefined;
  history.replaceState(null, "", `${location.pathname}#/`);
  return match[1];
}

/**
 * Trades a sign-in link's code, with the public half of a key pair made for this sign-in, for the
 * credential. A refused code throws `NotSignedIn` saying why (used, expired, unknown to this daemon).
 */
export async function signInWithCode(code: string): Promise<void> {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
    "sign",
    "verify",
  ]);
  const { x, y } = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const publicKey: UiPublicKey = { kty: "EC", crv: "P-256", x: x ?? "", y: y ?? "" };
  const response = await post("/ui/sign-in", { code, publicKey });
  if (!response.ok) throw new NotSignedIn(...(await refusalOf(response)));
  const { identityKey, ...signIn } = (await response.json()) as UiCredential;
  await savePageKeys({
    sessionId: signIn.sessionId,
    signingKey: pair.privateKey,
    identityKey: await crypto.subtle.importKey(
      "raw",
      fromBase64url(identityKey),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["verify"],
    ),
    expiresAt: signIn.expiresAt,
  });
  keep(signIn);
}

async function refusalOf(response: Response): Promise<[string, SignedOutReason]> {
  const fallback = `the sign-in link was refused (HTTP ${response.status})`;
  try {
    const { error } = (await response.json()) as FlootApiError;
    const reason = refusals.find((each) => each === error.code) ?? "sign_in_ended";
    return [error.message || fallback, reason];
  } catch {
    return [fallback, "sign_in_ended"];
  }
}

const refusals: readonly UiSignInRefusal[] = [
  "sign_in_link_used",
  "sign_in_link_expired",
  "sign_in_link_unknown",
];

/** Whether this tab holds a sign-in (the daemon may still refuse it). */
export function hasSignIn(): boolean {
  return sessionStorage.getItem(storageKey) !== null;
}

function keep(signIn: StoredSignIn): void {
  sessionStorage.setItem(storageKey, JSON.stringify(signIn));
  access = undefined;
}

/**
 * This tab's sign-in, for a new tab of the origin that asks for it, only while the process on the port
 * proves, now, that it is the daemon: a process that took the port gets no answer, and neither does a
 * page it served. The keys are not in it: they are the origin's already (IndexedDB), and do not export.
 */
export async function signInToShare(): Promise<StoredSignIn | undefined> {
  const signIn = storedSignIn();
  if (signIn === undefined) return undefined;
  const keys = await loadPageKeys(signIn.sessionId);
  if (keys === undefined) return undefined;
  try {
    await proveDaemon(signIn.sessionId, keys.identityKey);
  } catch {
    return undefined;
  }
  return signIn;
}

/**
 * Takes a sign-in another tab of this origin shared, when it is one: for this origin, not expired, its
 * keys in this browser's IndexedDB. The first request with it proves the daemon again, as for any.
 */
export async function adoptSignIn(candidate: unknown, stillWanted: () => boolean): Promise<boolean> {
  if (!isStoredSignIn(candidate)) return false;
  if (candidate.origin !== location.origin || Date.parse(candidate.expiresAt) <= Date.now()) return false;
  if ((await loadPageKeys(candidate.sessionId)) === undefined || !stillWanted()) return false;
  keep(candidate);
  return true;
}

function isStoredSignIn(value: unknown): value is StoredSignIn {
  if (typeof value !== "object" || value === null) return false;
  const { token, sessionId, origin, expiresAt } = value as Record<string, unknown>;
  const base64url256 = (text: unknown) => typeof text === "string" && /^[A-Za-z0-9_-]{43}$/.test(text);
  return (
    base64url256(token) &&
    base64url256(sessionId) &&
    typeof origin === "string" &&
    typeof expiresAt === "string" &&
    Object.keys(value).length === 4
  );
}

function storedSignIn(): StoredSignIn | undefined {
  const stored = sessionStorage.getItem(storageKey);
  return stored === null ? undefined : (JSON.parse(stored) as StoredSignIn);
}

/** The Authorization header for this daemon: an access token, got (again after every outage) once it proved its identity. */
export async function authorization(): Promise<string> {
  if (access === undefined || (await expiring(access))) access = obtainAccess();
  const pending = access;
  try {
    return `Bearer ${(await pending).accessToken}`;
  } catch (error) {
    if (access === pending) access = undefined;
    throw error;
  }
}

/**
 * The daemon stopped answering, or refused the access token (a restarted daemon knows none of the old
 * one's): prove its identity again, and sign for a new one, before the next request.
 */
export function forgetAccess(): void {
  access = undefined;
}

async function expiring(pending: Promise<UiAccess>): Promise<boolean> {
  try {
    return Date.parse((await pending).expiresAt) - renewAheadMs <= Date.now();
  } catch {
    return true;
  }
}

async function obtainAccess(): Promise<UiAccess> {
  const signIn = storedSignIn();
  if (signIn === undefined) throw new NotSignedIn("this tab has not signed in", "no_sign_in");
  if (signIn.origin !== location.origin) throw new NotSignedIn("the sign-in is for another origin");
  const keys = await loadPageKeys(signIn.sessionId);
  if (keys === undefined) throw new NotSignedIn("this browser holds no key for this tab's sign-in");
  await proveDaemon(signIn.sessionId, keys.identityKey);
  // Only now does anything of the sign-in leave the page. A refused signature (its nonce crowded out by
  // another holder of the token) is tried once more with a new challenge.
  for (let attempt = 0; ; attempt++) {
    const challenge = await post("/ui/challenge", { token: signIn.token });
    if (challenge.status === 401) throw new NotSignedIn("the daemon no longer knows this sign-in");
    if (!challenge.ok) throw new NotTheDaemon(`the challenge failed (HTTP ${challenge.status})`);
    const { nonce } = (await challenge.json()) as UiChallenge;
    const signature = await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      keys.signingKey,
      new TextEncoder().encode(`floot-ui-access\n${location.origin}\n${nonce}`),
    );
    const granted = await post("/ui/access", {
      token: signIn.token,
      nonce,
      signature: base64url(new Uint8Array(signature)),
    });
    if (granted.ok) return (await granted.json()) as UiAccess;
    if (granted.status !== 401) throw new NotTheDaemon(`the access exchange failed (HTTP ${granted.status})`);
    if (attempt > 0) throw new NotSignedIn("the daemon refused this page's signature");
  }
}

/** The daemon's HMAC answer under its key, over this origin and a fresh nonce; NotTheDaemon otherwise. */
async function proveDaemon(sessionId: string, identityKey: CryptoKey): Promise<void> {
  const nonce = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const response = await post("/ui/identity", { sessionId, nonce });
  if (!response.ok) throw new NotTheDaemon(`the identity check failed (HTTP ${response.status})`);
  const { proof } = (await response.json()) as UiIdentityProof;
  const ok = await crypto.subtle.verify(
    "HMAC",
    identityKey,
    fromBase64url(proof),
    new TextEncoder().encode(`${location.origin}\n${nonce}`),
  );
  if (!ok) throw new NotTheDaemon("the process on this port could not prove it is the daemon");
}

function post(path: string, body: unknown): Promise<Response> {
  return fetch(path, {
    method: "POST",
    credentials: "omit",
    cache: "no-store",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}
