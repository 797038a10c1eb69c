import type { FlootLoginCode, UiSignInRefusal } from "@bridgeworks/protocol";
import { digest, findDigest, live } from "./page-access.js";

export interface LoginCodesOptions {
  now: () => number;
  randomBytes: (size: number) => Buffer;
  ttlMs: number;
}

interface LiveCode {
  digest: Buffer;
  expiresAt: number;
}

interface SpentCode {
  digest: Buffer;
  /** `used`: redeemed; `expired`: its time ran out first. */
  how: "used" | "expired";
  /** Until when a refusal of it still says how it went. */
  rememberedUntil: number;
}

const maxOutstandingCodes = 64;
/** How many spent codes are remembered, and for how long, so a refused link says why. */
const maxSpentCodes = 256;
const spentMemoryMs = 24 * 60 * 60 * 1000;

/**
 * The sign-in links' one-time codes, in this process's memory only, as SHA-256 digests compared in
 * constant time. A code is live for `ttlMs` and used up by its first redemption. A spent one is
 * remembered (its digest, a day, the newest 256) only so that a refused link can say whether it was used
 * or ran out; a code this process never issued (or issued before a restart) is `unknown`.
 */
export class LoginCodes {
  readonly #options: LoginCodesOptions;
  #live: LiveCode[] = [];
  #spent: SpentCode[] = [];

  constructor(options: LoginCodesOptions) {
    this.#options = options;
  }

  mint(): FlootLoginCode {
    this.#prune();
    this.#live = this.#live.slice(-(maxOutstandingCodes - 1));
    const code = this.#options.randomBytes(32).toString("base64url");
    const expiresAt = this.#options.now() + this.#options.ttlMs;
    this.#live.push({ digest: digest(code), expiresAt });
    return { code, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** Uses `code` up: true when it was live (whatever the caller then makes of it). */
  redeem(code: string): boolean {
    this.#prune();
    const wanted = digest(code);
    const index = findDigest(this.#live, wanted);
    if (index === -1) return false;
    this.#live.splice(index, 1);
    this.#remember(wanted, "used");
    return true;
  }

  /** Why `code` is no live code now. */
  refusalOf(code: string): UiSignInRefusal {
    this.#prune();
    const spent = this.#spent[findDigest(this.#spent, digest(code))];
    if (spent === undefined) return "sign_in_link_unknown";
    return spent.how === "used" ? "sign_in_link_used" : "sign_in_link_expired";
  }

  #prune(): void {
    const now = this.#options.now();
    for (const each of this.#live) if (each.expiresAt <= now) this.#remember(each.digest, "expired");
    this.#live = live(this.#live, now);
    this.#spent = this.#spent.filter((each) => each.rememberedUntil > now);
  }

  #remember(digestOfCode: Buffer, how: SpentCode["how"]): void {
    const rememberedUntil = this.#options.now() + spentMemoryMs;
    this.#spent = [
      ...this.#spent.slice(-(maxSpentCodes - 1)),
      { digest: digestOfCode, how, rememberedUntil },
    ];
  }
}
