import { createHash } from "node:crypto";
import { promptPrefixUnits } from "./cache-prefix.js";
import { estimateTokens } from "./request-view.js";

/** The cache part of an Anthropic `usage`, as the model below accounts one request. */
export interface CacheUsage {
  /** Prompt tokens past the request's last `cache_control` breakpoint (never cached). */
  readonly input_tokens: number;
  readonly cache_read_input_tokens: number;
  readonly cache_creation_input_tokens: number;
}

interface CacheEntry {
  expiresAt: number;
}

/**
 * A model of Anthropic's prompt cache with a lifetime, for scripts that set `promptCache`. Every
 * `cache_control` breakpoint of a request caches the prompt prefix up to it (prefix units as
 * `cacheStability` counts them, tokens estimated as the double's other counts: a quarter of the
 * characters). A later request reads the longest cached prefix it begins with, up to its own last
 * breakpoint, if that entry has not expired; reading or writing an entry makes it live `ttlMs` from
 * then (the API's refresh on use). What it reads is `cache_read_input_tokens`, the rest up to its last
 * breakpoint `cache_creation_input_tokens`, the rest `input_tokens`. Simpler than the API: any cached
 * prefix counts (the API looks back about 20 blocks from each breakpoint) and nothing is evicted early.
 */
export class PromptCacheModel {
  private readonly entries = new Map<string, CacheEntry>();

  constructor(private readonly ttlMs: number) {}

  /** Accounts one request made at `now` (ms): what it reads, writes and pays uncached. */
  use(body: unknown, now: number): CacheUsage {
    const units = promptPrefixUnits(body);
    const keys: string[] = [""];
    const tokens: number[] = [0];
    for (const unit of units) {
      keys.push(createHash("sha256").update(keys.at(-1)!).update("\n").update(unit.key).digest("hex"));
      tokens.push(tokens.at(-1)! + estimateTokens(unit.key));
    }
    const cachedPrefix = units.findLastIndex((unit) => unit.breakpoint) + 1;
    let read = 0;
    for (let length = cachedPrefix; length > 0; length--) {
      const entry = this.entries.get(keys[length]!);
      if (entry && entry.expiresAt > now) {
        read = length;
        entry.expiresAt = now + this.ttlMs;
        break;
      }
    }
    units.forEach((unit, position) => {
      if (unit.breakpoint) this.entries.set(keys[position + 1]!, { expiresAt: now + this.ttlMs });
    });
    return {
      input_tokens: tokens[units.length]! - tokens[cachedPrefix]!,
      cache_read_input_tokens: tokens[read]!,
      cache_creation_input_tokens: tokens[cachedPrefix]! - tokens[read]!,
    };
  }
}
