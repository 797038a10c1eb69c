import { parseDuration } from "@bridgeworks/delivery-reconciler";

export const KEEP_WARM_VARIABLE = "CLAUDE_BRIDGE_KEEP_WARM";

/**
 * What Claude Code is asked to keep its prompt cache alive: a side question (its `/btw`), answered
 * beside the conversation, never part of it. Short, so the answer costs a few output tokens.
 */
export const KEEP_WARM_QUESTION = "Reply with the single word ok.";

/** `off`; `auto`: a little before Claude Code's cache lifetime runs out; `every`: a fixed interval. */
export type KeepWarmSetting =
  | { readonly kind: "off" }
  | { readonly kind: "auto" }
  | { readonly kind: "every"; readonly everyMs: number };

/**
 * `CLAUDE_BRIDGE_KEEP_WARM`: unset, `on`, `auto`, `1`: automatic; `0`, `off`, `false`: never; a duration
 * (`4m`, `90s`, `2500ms`): that long after Claude Code began waiting for Pi's tools, and every that
 * long after. Anything else is named in an error and taken as automatic.
 */
export function keepWarmFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; setting: KeepWarmSetting } | { ok: false; setting: KeepWarmSetting; error: string } {
  const value = env[KEEP_WARM_VARIABLE]?.trim().toLowerCase() ?? "";
  if (["", "on", "auto", "1", "true"].includes(value)) return { ok: true, setting: { kind: "auto" } };
  if (["0", "off", "false"].includes(value)) return { ok: true, setting: { kind: "off" } };
  const everyMs = parseDuration(value);
  if (everyMs !== undefined && everyMs > 0) return { ok: true, setting: { kind: "every", everyMs } };
  return {
    ok: false,
    setting: { kind: "auto" },
    error: `${KEEP_WARM_VARIABLE} must be on, off or a duration (4m, 90s, 2500ms); got ${JSON.stringify(env[KEEP_WARM_VARIABLE])}, so the cache is kept warm automatically`,
  };
}

const FIVE_MINUTES = 5 * 60_000;
const ONE_HOUR = 60 * 60_000;

/**
 * The prompt-cache lifetime Claude Code 2.1.332 asks for on its main thread (read in its binary,
 * `function rWe`/`UVn`): `FORCE_PROMPT_CACHING_5M`, else `CLAUDE_CODE_PROMPT_CACHE_TTL`, else
 * `ENABLE_PROMPT_CACHING_1H`, else 1 hour for a Claude subscription not drawing extra usage, else 5
 * minutes (an API key). Measured: `cache_control: {type: "ephemeral", ttl: "1h"}` on a subscription
 * token, `{type: "ephemeral"}` on an API key.
 */
export function claudeCacheTtlMs(
  env: Readonly<Record<string, string | undefined>>,
  subscription: boolean,
  usingOverage: boolean,
): number {
  if (env.FORCE_PROMPT_CACHING_5M) return FIVE_MINUTES;
  const explicit = env.CLAUDE_CODE_PROMPT_CACHE_TTL?.trim();
  if (explicit === "5m") return FIVE_MINUTES;
  if (explicit === "1h" || env.ENABLE_PROMPT_CACHING_1H) return ONE_HOUR;
  return subscription && !usingOverage ? ONE_HOUR : FIVE_MINUTES;
}

/**
 * A side question's own cost beyond reading the prefix, in input-token equivalents: measured with the
 * double (`bench/keep-warm.bench.mjs`), about 440 uncached input tokens (the question and Claude Code's
 * reminder around it), a few written to the cache, a few output tokens.
 */
export const SIDE_QUESTION_OVERHEAD_TOKENS = 500;

/**
 * How many side questions one wait on tools may cost before they cost more than the rebuild they
 * avoid: a rebuild writes the prompt prefix (`promptTokens`) at 1.25x the input price (5-minute cache)
 * or 2x (1 hour); a side question reads it at 0.1x, plus its overhead. Undefined (no limit) before
 * Claude Code reported any usage.
 */
export function affordableSideQuestions(promptTokens: number | undefined, ttlMs: number): number | undefined {
  if (promptTokens === undefined) return undefined;
  const write = ttlMs > FIVE_MINUTES ? 2 : 1.25;
  return Math.floor((write * promptTokens) / (0.1 * promptTokens + SIDE_QUESTION_OVERHEAD_TOKENS));
}

/** How long after Claude Code began waiting on tools to ask, and again: a tenth before the cache expires. */
export function keepWarmEveryMs(setting: KeepWarmSetting, ttlMs: number): number | undefined {
  if (setting.kind === "off") return undefined;
  return setting.kind === "every" ? setting.everyMs : Math.floor(ttlMs * 0.9);
}

/** What a provider tells each of its queries about keeping the cache warm. */
export interface KeepWarmPolicy {
  readonly setting: KeepWarmSetting;
  /** False when the spending guard would refuse a request now. */
  readonly allowed: () => boolean;
  /** Claude Code said requests draw extra usage (it then caches for 5 minutes only). */
  readonly usingOverage: () => boolean;
}

export type KeepWarmOutcome =
  | { readonly outcome: "sent"; readonly ms: number }
  | { readonly outcome: "failed"; readonly ms: number; readonly detail: string }
  | { readonly outcome: "refused" | "unavailable" };

export interface KeepWarmHooks {
  /** The interval now (it depends on what Claude Code reported), undefined to never ask. */
  readonly everyMs: () => number | undefined;
  /** False when the spending guard would refuse a request now. */
  readonly allowed: () => boolean;
  /** How many side questions one wait may ask (undefined: no limit). */
  readonly budget: () => number | undefined;
  /** Asks Claude Code the side question; undefined when this Agent SDK cannot. */
  readonly ask: ((question: string) => Promise<unknown>) | undefined;
  readonly report: (outcome: KeepWarmOutcome) => void;
  readonly now: () => number;
}

/**
 * While Claude Code waits for Pi's tools (`start` .. `stop`), asks it a side question every interval,
 * so the request after a long tool still reads the cached prompt prefix. A side question reads the same
 * prefix (measured: `bench/warm-probe.mjs`), is no turn of the conversation, and goes on no Pi stream.
 */
export class KeepWarm {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private waiting = false;
  /** Side questions asked in this wait. */
  private asked = 0;

  constructor(private readonly hooks: KeepWarmHooks) {}

  start(): void {
    if (this.waiting) return;
    this.waiting = true;
    this.asked = 0;
    this.arm();
  }

  stop(): void {
    this.waiting = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    const everyMs = this.hooks.everyMs();
    const budget = this.hooks.budget();
    if (!this.waiting || everyMs === undefined || (budget !== undefined && this.asked >= budget)) return;
    this.timer = setTimeout(() => void this.ping(), everyMs);
    this.timer.unref?.();
  }

  private async ping(): Promise<void> {
    this.timer = undefined;
    if (!this.waiting) return;
    const ask = this.hooks.ask;
    if (!ask) return this.hooks.report({ outcome: "unavailable" });
    if (!this.hooks.allowed()) {
      this.hooks.report({ outcome: "refused" });
      return this.arm();
    }
    const started = this.hooks.now();
    this.asked += 1;
    try {
      await ask(KEEP_WARM_QUESTION);
      this.hooks.report({ outcome: "sent", ms: this.hooks.now() - started });
    } catch (error) {
      const detail = (error instanceof Error ? error.message : String(error)).slice(0, 500) || "no detail";
      this.hooks.report({ outcome: "failed", ms: this.hooks.now() - started, detail });
    }
    this.arm();
  }
}
