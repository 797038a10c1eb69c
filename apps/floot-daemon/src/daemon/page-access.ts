import { createHash, type KeyObject, timingSafeEqual, verify } from "node:crypto";
import type { UiAccess, UiChallenge } from "@bridgeworks/protocol";

/** A sign-in as the page's access needs it: which one (its token's digest), where, until when, whose key. */
export interface SignedInPage {
  digest: Buffer;
  origin: string;
  expiresAt: number;
  publicKey: KeyObject;
}

export interface PageAccessOptions {
  now: () => number;
  randomBytes: (size: number) => Buffer;
  challengeTtlMs?: number;
  accessTtlMs?: number;
}

interface Grant {
  /** SHA-256 of the nonce or access token: only digests are kept, compared in constant time. */
  digest: Buffer;
  /** The sign-in it belongs to (its token's digest). */
  signIn: Buffer;
  origin: string;
  expiresAt: number;
}

const defaultChallengeTtlMs = 60_000;
const defaultAccessTtlMs = 10 * 60_000;
/** Per sign-in: the oldest goes first (a thief with the token can crowd out the page's, not mint more). */
const maxChallengesPerSignIn = 8;
const maxAccessPerSignIn = 16;

/**
 * The page's proof of possession, in this process's memory only. The stored token opens nothing by
 * itself: the page asks for a nonce (`challenge`), signs `floot-ui-access\n<origin>\n<nonce>` with its
 * non-extractable key, and trades nonce and signature for a short-lived access token (`grant`), which is
 * what `/v1` takes. A nonce is single use, bound to its sign-in and origin; nonces and access tokens
 * die with the daemon process, so a signature made for one daemon is worth nothing to the next.
 */
export class PageAccess {
  readonly #now: () => number;
  readonly #random: (size: number) => Buffer;
  readonly #challengeTtlMs: number;
  readonly #accessTtlMs: number;
  #challenges: Grant[] = [];
  #access: Grant[] = [];

  constructor(options: PageAccessOptions) {
    this.#now = options.now;
    this.#random = options.randomBytes;
    this.#challengeTtlMs = options.challengeTtlMs ?? defaultChallengeTtlMs;
    this.#accessTtlMs = options.accessTtlMs ?? defaultAccessTtlMs;
  }

  challenge(page: SignedInPage): UiChallenge {
    const nonce = this.#random(32).toString("base64url");
    const expiresAt = Math.min(this.#now() + this.#challengeTtlMs, page.expiresAt);
    this.#challenges = this.#add(this.#challenges, page, digest(nonce), expiresAt, maxChallengesPerSignIn);
    return { nonce, expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * An access token for `page` on `origin`, when `nonce` is a live challenge of this sign-in and origin
   * (used up either way) and `signature` is the page key's over them; undefined when refused.
   */
  grant(page: SignedInPage, origin: string, nonce: string, signature: string): UiAccess | undefined {
    this.#challenges = live(this.#challenges, this.#now());
    const index = findDigest(this.#challenges, digest(nonce));
    if (index === -1) return undefined;
    const [challenge] = this.#challenges.splice(index, 1);
    if (!challenge!.signIn.equals(page.digest) || challenge!.origin !== origin || page.origin !== origin) {
      return undefined;
    }
    if (!verifiesSignature(page.publicKey, `floot-ui-access\n${origin}\n${nonce}`, signature))
      return undefined;
    const accessToken = this.#random(32).toString("base64url");
    const expiresAt = Math.min(this.#now() + this.#accessTtlMs, page.expiresAt);
    this.#access = this.#add(this.#access, page, digest(accessToken), expiresAt, maxAccessPerSignIn);
    return { accessToken, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** The sign-in (its token's digest) a live access token for `origin` belongs to, if any. */
  signInOf(accessToken: string, origin: string): Buffer | undefined {
    const now = this.#now();
    const grant = this.#access[findDigest(this.#access, digest(accessToken))];
    return grant !== undefined && grant.expiresAt > now && grant.origin === origin ? grant.signIn : undefined;
  }

  #add(grants: Grant[], page: SignedInPage, wanted: Buffer, expiresAt: number, perSignIn: number): Grant[] {
    const kept = live(grants, this.#now());
    const own = kept.filter((grant) => grant.signIn.equals(page.digest));
    const dropped = new Set(own.slice(0, Math.max(0, own.length - (perSignIn - 1))));
    return [
      ...kept.filter((grant) => !dropped.has(grant)),
      { digest: wanted, signIn: page.digest, origin: page.origin, expiresAt },
    ];
  }
}

function verifiesSignature(publicKey: KeyObject, message: string, signature: string): boolean {
  const bytes = Buffer.from(signature, "base64url");
  if (bytes.length !== 64) return false;
  try {
    return verify(
      "sha256",
      Buffer.from(message, "utf8"),
      { key: publicKey, dsaEncoding: "ieee-p1363" },
      bytes,
    );
  } catch {
    return false;
  }
}

export function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

export function live<T extends { expiresAt: number }>(grants: T[], now: number): T[] {
  return grants.filter((grant) => grant.expiresAt > now);
}

/** Compares against every grant, whatever matches, so timing tells nothing about which or how many. */
export function findDigest(grants: { digest: Buffer }[], wanted: Buffer): number {
  let found = -1;
  grants.forEach((grant, index) => {
    if (timingSafeEqual(grant.digest, wanted) && found === -1) found = index;
  });
  return found;
}
