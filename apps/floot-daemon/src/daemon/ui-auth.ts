import {
  createHash,
  createHmac,
  createPublicKey,
  randomBytes as cryptoRandomBytes,
  type KeyObject,
} from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type FlootLoginCode,
  type UiAccess,
  type UiChallenge,
  type UiCredential,
  UiPublicKey,
  type UiSignInRefusal,
} from "@bridgeworks/protocol";
import { loadDaemonKey } from "./daemon-key.js";
import { LoginCodes } from "./login-codes.js";
import { digest, findDigest, live, PageAccess, type SignedInPage } from "./page-access.js";
import { serializedPrivateFile } from "./serialized-file.js";

export interface UiAuthOptions {
  stateDir: string;
  now?: () => number;
  randomBytes?: (size: number) => Buffer;
  loginCodeTtlMs?: number;
  sessionTtlMs?: number;
  challengeTtlMs?: number;
  accessTtlMs?: number;
}

interface Grant {
  digest: Buffer;
  expiresAt: number;
}

interface Session extends Grant, SignedInPage {
  /** The page's public key as it sent it (what `ui-sessions.json` keeps; `publicKey` is it parsed). */
  jwk: UiPublicKey;
}

interface StoredSession {
  digest: string;
  origin: string;
  expiresAt: string;
  publicKey: UiPublicKey;
}

export const uiSessionsFileName = "ui-sessions.json";
const defaultLoginCodeTtlMs = 60_000;
const defaultSessionTtlMs = 14 * 24 * 60 * 60 * 1000;

/**
 * The web UI's sign-in. `floot open` (holding the API token) mints a one-time code; the page trades it,
 * with its public key (`POST /ui/sign-in`), for a token bound to the origin it signed in on
 * (`http://127.0.0.1:<port>`), which it keeps in `sessionStorage`. The token alone opens nothing: `/v1`
 * takes an access token of this process (`PageAccess`), granted for a signature by the page's key. Only
 * SHA-256 digests of codes and tokens are kept, compared in constant time. Token digests and public keys
 * persist in the state dir (0600), so an open page reattaches after a restart on the same port; codes,
 * nonces and access tokens do not outlive the daemon process.
 *
 * Identity: each session has an id and an identity key, HMAC(daemon key, id), where the daemon key is a
 * persistent 0600 file in the state dir. Before sending its token the page sends a nonce; only the real
 * daemon can answer HMAC(identity key, origin + nonce), so a process that took the port learns nothing.
 */
export class UiAuth {
  readonly #path: string;
  readonly #key: Buffer;
  readonly #now: () => number;
  readonly #random: (size: number) => Buffer;
  readonly #sessionTtlMs: number;
  /** Saves the sessions one write at a time, each of the list as it is then: none is lost to a race. */
  readonly #save: () => Promise<void>;
  readonly #codes: LoginCodes;
  #sessions: Session[];
  readonly #access: PageAccess;

  constructor(options: UiAuthOptions) {
    this.#path = join(options.stateDir, uiSessionsFileName);
    this.#now = options.now ?? Date.now;
    this.#random = options.randomBytes ?? cryptoRandomBytes;
    this.#key = loadDaemonKey(options.stateDir, this.#random);
    this.#codes = new LoginCodes({
      now: this.#now,
      randomBytes: this.#random,
      ttlMs: options.loginCodeTtlMs ?? defaultLoginCodeTtlMs,
    });
    this.#sessionTtlMs = options.sessionTtlMs ?? defaultSessionTtlMs;
    this.#sessions = this.#load();
    this.#save = serializedPrivateFile(this.#path, () => this.#serialize());
    this.#access = new PageAccess({
      now: this.#now,
      randomBytes: this.#random,
      ...(options.challengeTtlMs !== undefined && { challengeTtlMs: options.challengeTtlMs }),
      ...(options.accessTtlMs !== undefined && { accessTtlMs: options.accessTtlMs }),
    });
  }

  mintLoginCode(): FlootLoginCode {
    return this.#codes.mint();
  }

  /** Why a refused sign-in `code` was refused: used, expired, or not one this process issued. */
  loginCodeRefusal(code: string): UiSignInRefusal {
    return this.#codes.refusalOf(code);
  }

  /**
   * Trades a live code (used up either way) for a credential bound to `origin` and to the page's key
   * (`publicKeyOf` checked it); undefined when refused.
   */
  async redeemLoginCode(code: string, origin: string, jwk: UiPublicKey): Promise<UiCredential | undefined> {
    if (!this.#codes.redeem(code)) return undefined;
    const publicKey = publicKeyOf(jwk);
    if (publicKey === undefined) return undefined;
    const token = this.#random(32).toString("base64url");
    const expiresAt = this.#now() + this.#sessionTtlMs;
    const session: Session = { digest: digest(token), origin, expiresAt, jwk, publicKey };
    this.#sessions = [...live(this.#sessions, this.#now()), session];
    await this.#save();
    const sessionId = sessionIdOf(token);
    return {
      token,
      sessionId,
      identityKey: this.#identityKey(sessionId).toString("base64url"),
      origin,
      expiresAt: new Date(expiresAt).toISOString(),
    };
  }

  /** A nonce for the sign-in `token` names on `origin` to sign; undefined for no live sign-in there. */
  challenge(token: string, origin: string): UiChallenge | undefined {
    const session = this.#sessionOf(token, origin);
    return session && this.#access.challenge(session);
  }

  /** An access token for a live challenge signed by the sign-in's key; undefined when refused. */
  grantAccess(token: string, origin: string, nonce: string, signature: string): UiAccess | undefined {
    const session = this.#sessionOf(token, origin);
    return session && this.#access.grant(session, origin, nonce, signature);
  }

  /**
   * Whether `accessToken` is a live access token of this process for `origin`, of a sign-in still live
   * (a revoked or expired sign-in ends its access tokens). The stored token is not one.
   */
  isAccess(accessToken: string | undefined, origin: string): boolean {
    return this.signInOf(accessToken, origin) !== undefined;
  }

  /**
   * The sign-in a live access token for `origin` belongs to, as decisions record it: the start of its
   * stored digest (what `ui-sessions.json` names it by), never a token.
   */
  signInOf(accessToken: string | undefined, origin: string): string | undefined {
    if (!accessToken) return undefined;
    const signIn = this.#access.signInOf(accessToken, origin);
    if (signIn === undefined) return undefined;
    const session = this.#sessions[findDigest(this.#sessions, signIn)];
    const live = session !== undefined && session.expiresAt > this.#now() && session.origin === origin;
    return live ? signIn.toString("hex").slice(0, 12) : undefined;
  }

  #sessionOf(token: string, origin: string): Session | undefined {
    const session = this.#sessions[findDigest(this.#sessions, digest(token))];
    return session !== undefined && session.expiresAt > this.#now() && session.origin === origin
      ? session
      : undefined;
  }

  /**
   * Revokes every token bound to `port` (both its origins): another process holds that port, and a page
   * it served in a signed-in tab can read the tab's `sessionStorage`. Returns how many were revoked.
   */
  revokePort(port: number): Promise<number> {
    return this.#drop((session) => portOf(session.origin) === port);
  }

  /** Revokes every token bound to `origin` (`http://localhost:<port>` when another process holds `[::1]`). */
  revokeOrigin(origin: string): Promise<number> {
    return this.#drop((session) => session.origin === origin);
  }

  /** Keeps only the tokens bound to `port`, the one this daemon serves: the others are revoked. */
  retainPort(port: number): Promise<number> {
    return this.#drop((session) => portOf(session.origin) !== port);
  }

  async #drop(revoked: (session: Session) => boolean): Promise<number> {
    const kept = this.#sessions.filter((session) => !revoked(session));
    const dropped = this.#sessions.length - kept.length;
    this.#sessions = kept;
    if (dropped > 0) await this.#save();
    return dropped;
  }

  /** The daemon's answer to a page's identity challenge (for any id: existence is not revealed). */
  prove(sessionId: string, origin: string, nonce: string): string {
    return createHmac("sha256", this.#identityKey(sessionId))
      .update(`${origin}\n${nonce}`, "utf8")
      .digest("base64url");
  }

  #identityKey(sessionId: string): Buffer {
    return createHmac("sha256", this.#key).update(`floot-ui-identity\n${sessionId}`, "utf8").digest();
  }

  #load(): Session[] {
    try {
      const stored = JSON.parse(readFileSync(this.#path, "utf8")) as { sessions?: StoredSession[] };
      // A sign-in stored without a valid public key (one from before keys) cannot prove anything: dropped.
      return live(
        (stored.sessions ?? []).flatMap((each) => {
          const publicKey = publicKeyOf(each.publicKey);
          if (!/^[0-9a-f]{64}$/.test(each.digest) || typeof each.origin !== "string" || !publicKey) return [];
          return [
            {
              digest: Buffer.from(each.digest, "hex"),
              origin: each.origin,
              expiresAt: Date.parse(each.expiresAt),
              jwk: each.publicKey,
              publicKey,
            },
          ];
        }),
        this.#now(),
      );
    } catch {
      return [];
    }
  }

  #serialize(): string {
    const sessions: StoredSession[] = this.#sessions.map((each) => ({
      digest: each.digest.toString("hex"),
      origin: each.origin,
      expiresAt: new Date(each.expiresAt).toISOString(),
      publicKey: each.jwk,
    }));
    return `${JSON.stringify({ sessions })}\n`;
  }
}

/** A public name for a session: not the token, and not its stored digest. */
function sessionIdOf(token: string): string {
  return createHash("sha256").update(`floot-ui-session-id\n${token}`, "utf8").digest("base64url");
}

function portOf(origin: string): number | undefined {
  try {
    return Number(new URL(origin).port) || undefined;
  } catch {
    return undefined;
  }
}

/** The page's key as node:crypto verifies with it; undefined for anything but a P-256 public key. */
export function publicKeyOf(jwk: unknown): KeyObject | undefined {
  const parsed = UiPublicKey.safeParse(jwk);
  if (!parsed.success) return undefined;
  try {
    return createPublicKey({ key: parsed.data, format: "jwk" });
  } catch {
    return undefined;
  }
}
