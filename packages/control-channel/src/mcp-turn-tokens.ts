import type { ControlToken } from "@bridgeworks/protocol";
import { mintToken, type RandomBytes, tokensEqual } from "./token.js";

/**
 * Per-turn capability tokens for one bridge generation: `issue` mints a fresh token for a turn's
 * mount, `authorize` finds the turn a token belongs to (pass it as `startMcpSocketServer`'s
 * `authorize`), `revoke` ends it when the turn ends. Lookups compare against every live token in
 * constant time, so neither a match nor its position leaks through timing. Tokens live in memory
 * only: a restarted daemon has a new generation and a new registry, and every old token is dead.
 */
export class TurnTokenRegistry<Context> {
  readonly #randomBytes: RandomBytes;
  readonly #entries = new Map<string, Context>();
  readonly #singleUse: boolean;
  readonly #used = new Set<string>();

  /**
   * `singleUse`: a token authorizes one connection only (the one its turn's shim opens first), so a
   * copy read out of the shim's memory later opens nothing.
   */
  constructor(randomBytes: RandomBytes, options: { singleUse?: boolean } = {}) {
    this.#randomBytes = randomBytes;
    this.#singleUse = options.singleUse ?? false;
  }

  issue(context: Context): ControlToken {
    const token = mintToken(this.#randomBytes);
    this.#entries.set(token, context);
    return token;
  }

  authorize(token: string): Context | undefined {
    let found: Context | undefined;
    let matched: string | undefined;
    for (const [candidate, context] of this.#entries) {
      // No early exit: every entry is compared whatever matched.
      if (tokensEqual(candidate, token)) {
        found = context;
        matched = candidate;
      }
    }
    if (matched === undefined || !this.#singleUse) return found;
    if (this.#used.has(matched)) return undefined;
    this.#used.add(matched);
    return found;
  }

  /** Returns whether the token was live. */
  revoke(token: string): boolean {
    this.#used.delete(token);
    return this.#entries.delete(token);
  }

  get size(): number {
    return this.#entries.size;
  }
}
