import { createHash, createHmac, randomBytes as cryptoRandomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { FlootLoginCode, UiCredential } from "@bridgeworks/protocol";
import { loadDaemonKey } from "./daemon-key.js";
import { serializedPrivateFile } from "./serialized-file.js";

export interface UiAuthOptions {
  stateDir: string;
  now?: () => number;
  randomBytes?: (size: number) => Buffer;
  loginCodeTtlMs?: number;
  sessionTtlMs?: number;
}

interface Grant {
  digest: Buffer;
  expiresAt: number;
}

interface Session extends Grant {
  origin: string;
}

interface StoredSession {
  digest: string;
  origin: string;
  expiresAt: string;
}

export const uiSessionsFileName = "ui-sessions.json";
const defaultLoginCodeTtlMs = 60_000;
const defaultSessionTtlMs = 14 * 24 * 60 * 60 * 1000;
const maxOutstandingCodes = 64;

/**
 * The web UI's sign-in. `floot open` (holding the API token) mints a one-time code; the page trades it
 * (`POST /ui/sign-in`) for a bearer token bound to the origin it signed in on (`http://127.0.0.1:<port>`),
 * which it keeps in `sessionStorage` and sends as `Authorization`. Only SHA-256 digests of codes and
 * tokens are kept, compared in constant time. Token digests persist in the state dir (0600), so an open
 * page reattaches after a restart on the same port; codes do not outlive the daemon.
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
  readonly #loginCodeTtlMs: number;
  readonly #sessionTtlMs: number;
  /** Saves the sessions one write at a time, each of the list as it is then: none is lost to a race. */
  readonly #save: () => Promise<void>;
  #codes: Grant[] = [];
  #sessions: Session[];

  constructor(options: UiAuthOptions) {
    this.#path = join(options.stateDir, uiSessionsFileName);
    this.#now = options.now ?? Date.now;
    this.#random = options.randomBytes ?? cryptoRandomBytes;
    this.#key = loadDaemonKey(options.stateDir, this.#random);
    this.#loginCodeTtlMs = options.loginCodeTtlMs ?? defaultLoginCodeTtlMs;
    this.#sessionTtlMs = options.sessionTtlMs ?? defaultSessionTtlMs;
    this.#sessions = this.#load();
    this.#save = serializedPrivateFile(this.#path, () => this.#serialize());
  }

  mintLoginCode(): FlootLoginCode {
    this.#codes = live(this.#codes, this.#now()).slice(-(maxOutstandingCodes - 1));
    const code = this.#random(32).toString("base64url");
    const expiresAt = this.#now() + this.#loginCodeTtlMs;
    this.#codes.push({ digest: digest(code), expiresAt });
    return { code, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** Trades a live code (used up either way) for a credential bound to `origin`; undefined when refused. */
  async redeemLoginCode(code: string, origin: string): Promise<UiCredential | undefined> {
    this.#codes = live(this.#codes, this.#now());
    const index = findDigest(this.#codes, digest(code));
    if (index === -1) return undefined;
    this.#codes.splice(index, 1);
    const token = this.#random(32).toString("base64url");
    const expiresAt = this.#now() + this.#sessionTtlMs;
    this.#sessions = [...live(this.#sessions, this.#now()), { digest: digest(token), origin, expiresAt }];
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

  /** Whether `token` is a live session issued for `origin` (a token used on another port is refused). */
  isSession(token: string | undefined, origin: string): boolean {
    return this.signInOf(token, origin) !== undefined;
  }

  /**
   * The sign-in a live `token` for `origin` belongs to, as decisions record it: the start of its public
   * id (what the page's identity check names), never the token or its stored digest.
   */
  signInOf(token: string | undefined, origin: string): string | undefined {
    if (!token) return undefined;
    const session = this.#sessions[findDigest(this.#sessions, digest(token))];
    const live = session !== undefined && session.expiresAt > this.#now() && session.origin === origin;
    return live ? sessionIdOf(token).slice(0, 12) : undefined;
  }

  /**
   * Revokes every token bound to `port` (both its origins): another process holds that port, and a page
   * it served in a signed-in tab can read the tab's `sessionStorage`. Returns how many were revoked.
   */
  revokePort(port: number): Promise<number> {
    return this.#drop((session) => portOf(session.origin) === port);
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
      return live(
        (stored.sessions ?? [])
          .filter((each) => /^[0-9a-f]{64}$/.test(each.digest) && typeof each.origin === "string")
          .map((each) => ({
            digest: Buffer.from(each.digest, "hex"),
            origin: each.origin,
            expiresAt: Date.parse(each.expiresAt),
          })),
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

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

function live<T extends Grant>(grants: T[], now: number): T[] {
  return grants.filter((grant) => grant.expiresAt > now);
}

/** Compares against every grant, whatever matches, so timing tells nothing about which or how many. */
function findDigest(grants: Grant[], wanted: Buffer): number {
  let found = -1;
  grants.forEach((grant, index) => {
    if (timingSafeEqual(grant.digest, wanted) && found === -1) found = index;
  });
  return found;
}
