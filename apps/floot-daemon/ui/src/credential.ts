import type { UiCredential, UiIdentityProof } from "@bridgeworks/protocol";

// The page's credential: a token bound to this origin (scheme, host and port), in sessionStorage, sent
// only as an Authorization header and only after the daemon proved it is the one that issued it.

const storageKey = "floot.credential";
const loginFragment = /^#login=([A-Za-z0-9_-]{43})$/;

/** No credential, or the daemon refused the sign-in code. */
export class NotSignedIn extends Error {}

/** Whoever answers on this port could not prove it is the daemon: nothing of value was sent to it. */
export class NotTheDaemon extends Error {}

let verified: Promise<UiCredential> | undefined;

/**
 * The sign-in link is `/#login=<code>`: a fragment never reaches a server, a log or a Referer. The code is
 * taken out of the address bar at once, then traded for the credential.
 */
export async function signInFromFragment(): Promise<void> {
  const match = loginFragment.exec(location.hash);
  if (match === null) return;
  history.replaceState(null, "", `${location.pathname}#/`);
  const response = await fetch("/ui/sign-in", {
    method: "POST",
    credentials: "omit",
    cache: "no-store",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code: match[1] }),
  });
  if (!response.ok) throw new NotSignedIn(`the sign-in link was refused (HTTP ${response.status})`);
  const credential = (await response.json()) as UiCredential;
  sessionStorage.setItem(storageKey, JSON.stringify(credential));
  verified = Promise.resolve(credential);
}

/** The Authorization header for this daemon, once it proved its identity (again after every outage). */
export async function authorization(): Promise<string> {
  verified ??= verifyDaemon();
  try {
    return `Bearer ${(await verified).token}`;
  } catch (error) {
    verified = undefined;
    throw error;
  }
}

/** The daemon stopped answering: prove its identity again before the next request carries the token. */
export function forgetVerification(): void {
  verified = undefined;
}

async function verifyDaemon(): Promise<UiCredential> {
  const stored = sessionStorage.getItem(storageKey);
  if (stored === null) throw new NotSignedIn("this tab has not signed in");
  const credential = JSON.parse(stored) as UiCredential;
  if (credential.origin !== location.origin) throw new NotSignedIn("the credential is for another origin");
  const nonce = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const response = await fetch("/ui/identity", {
    method: "POST",
    credentials: "omit",
    cache: "no-store",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ sessionId: credential.sessionId, nonce }),
  });
  if (!response.ok) throw new NotTheDaemon(`the identity check failed (HTTP ${response.status})`);
  const { proof } = (await response.json()) as UiIdentityProof;
  const key = await crypto.subtle.importKey(
    "raw",
    fromBase64url(credential.identityKey),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
  const ok = await crypto.subtle.verify(
    "HMAC",
    key,
    fromBase64url(proof),
    new TextEncoder().encode(`${location.origin}\n${nonce}`),
  );
  if (!ok) throw new NotTheDaemon("the process on this port could not prove it is the daemon");
  return credential;
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
