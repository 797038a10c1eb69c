import { createHash, randomBytes as cryptoRandomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writePrivateFileAtomic } from "@bridgeworks/control-channel";
import type { FlootLoginCode } from "@bridgeworks/protocol";

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

interface StoredSession {
  digest: string;
  expiresAt: string;
}

export const uiSessionsFileName = "ui-sessions.json";
const defaultLoginCodeTtlMs = 60_000;
const defaultSessionTtlMs = 14 * 24 * 60 * 60 * 1000;
const maxOutstandingCodes = 64;

/**
 * The web UI's login: `floot open` (holding the API token) mints a one-time code; `GET /login?code=…`
 * trades it for a random session cookie. Only SHA-256 digests are kept, and compared in constant time.
 * Session digests are persisted in the state dir so an open page survives a daemon restart; codes are
 * not (a code outlives no daemon).
 */
export class UiAuth {
  readonly #path: string;
  readonly #now: () => number;
  readonly #random: (size: number) => Buffer;
  readonly #loginCodeTtlMs: number;
  readonly #sessionTtlMs: number;
  #codes: Grant[] = [];
  #sessions: Grant[];

  constructor(options: UiAuthOptions) {
    this.#path = join(options.stateDir, uiSessionsFileName);
    this.#now = options.now ?? Date.now;
    this.#random = options.randomBytes ?? cryptoRandomBytes;
    this.#loginCodeTtlMs = options.loginCodeTtlMs ?? defaultLoginCodeTtlMs;
    this.#sessionTtlMs = options.sessionTtlMs ?? defaultSessionTtlMs;
    this.#sessions = this.#load();
  }

  mintLoginCode(): FlootLoginCode {
    this.#codes = live(this.#codes, this.#now()).slice(-(maxOutstandingCodes - 1));
    const code = this.#random(32).toString("base64url");
    const expiresAt = this.#now() + this.#loginCodeTtlMs;
    this.#codes.push({ digest: digest(code), expiresAt });
    return { code, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** Trades a live code (used up either way) for a new session cookie value; undefined when refused. */
  async redeemLoginCode(code: string): Promise<string | undefined> {
    this.#codes = live(this.#codes, this.#now());
    const index = findDigest(this.#codes, digest(code));
    if (index === -1) return undefined;
    this.#codes.splice(index, 1);
    const value = this.#random(32).toString("base64url");
    this.#sessions = [
      ...live(this.#sessions, this.#now()),
      { digest: digest(value), expiresAt: this.#now() + this.#sessionTtlMs },
    ];
    await this.#save();
    return value;
  }

  isSession(value: string | undefined): boolean {
    if (!value) return false;
    const grant = this.#sessions[findDigest(this.#sessions, digest(value))];
    return grant !== undefined && grant.expiresAt > this.#now();
  }

  #load(): Grant[] {
    try {
      const stored = JSON.parse(readFileSync(this.#path, "utf8")) as { sessions?: StoredSession[] };
      return live(
        (stored.sessions ?? [])
          .filter((each) => /^[0-9a-f]{64}$/.test(each.digest))
          .map((each) => ({
            digest: Buffer.from(each.digest, "hex"),
            expiresAt: Date.parse(each.expiresAt),
          })),
        this.#now(),
      );
    } catch {
      return [];
    }
  }

  async #save(): Promise<void> {
    const sessions: StoredSession[] = this.#sessions.map((each) => ({
      digest: each.digest.toString("hex"),
      expiresAt: new Date(each.expiresAt).toISOString(),
    }));
    await writePrivateFileAtomic(this.#path, `${JSON.stringify({ sessions })}\n`);
  }
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

function live(grants: Grant[], now: number): Grant[] {
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
