import { limitName, type RateLimitState, rateLimitStatus, resetText } from "./rate-limits.js";

export const SPEND_VARIABLE = "CLAUDE_BRIDGE_SPEND";

/**
 * What the provider may spend: `any` (the default: whatever Claude Code's account allows, extra
 * usage included) or `plan-only` (never a request Claude Code said would draw extra usage).
 */
export type SpendPolicy = "any" | "plan-only";

/**
 * `CLAUDE_BRIDGE_SPEND`: unset, empty or `any`; `plan-only`. Anything else is named in an error and
 * taken as `plan-only`: a mistyped money setting must not spend.
 */
export function spendPolicyFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; policy: SpendPolicy } | { ok: false; policy: "plan-only"; error: string } {
  const value = env[SPEND_VARIABLE]?.trim().toLowerCase();
  if (value === undefined || value === "" || value === "any") return { ok: true, policy: "any" };
  if (value === "plan-only") return { ok: true, policy: "plan-only" };
  return {
    ok: false,
    policy: "plan-only",
    error: `${SPEND_VARIABLE} must be any or plan-only; got ${JSON.stringify(env[SPEND_VARIABLE])}, so extra usage is refused as with plan-only`,
  };
}

/** The request the guard refused: why, for Pi, and the window that is used up. */
export interface SpendRefusal {
  readonly message: string;
  readonly limit: RateLimitState;
}

/**
 * The account's limits as Claude Code last reported them (rate-limit events; one account per
 * provider, so every Pi session shares them), and the spending guard on top. With `plan-only`, once
 * Claude Code says a request was let through on extra usage (`isUsingOverage`), every later request
 * is refused before anything is sent, until the used-up window resets or Claude Code reports the plan
 * allowing requests again. The request that brought the news was already answered (and billed): the
 * API says so only in that answer's headers.
 */
export class AccountLimits {
  private latest: RateLimitState | undefined;
  private readonly windows = new Map<string, RateLimitState>();
  private exhausted: RateLimitState | undefined;

  constructor(
    readonly policy: SpendPolicy,
    private readonly now: () => number,
  ) {}

  note(state: RateLimitState): void {
    this.latest = state;
    this.windows.set(state.window ?? "unnamed", state);
    if (state.usingOverage) this.exhausted = state;
    else if (state.status !== "rejected") this.exhausted = undefined;
  }

  /** The refusal of the next request, or undefined when it may go. */
  refusal(): SpendRefusal | undefined {
    const limit = this.blocking();
    return limit ? { message: spendRefusedMessage(limit, this.now()), limit } : undefined;
  }

  /** Pi's status line: the latest limit event and, with `plan-only`, the guard. */
  statusLine(): string | undefined {
    const now = this.now();
    const blocking = this.blocking();
    if (blocking) {
      const reset = blocking.resetsAtMs !== undefined ? ` · ${resetText(blocking.resetsAtMs, now)}` : "";
      return `Claude Code: ${limitName(blocking.window)} reached${reset} · extra usage refused (plan only)`;
    }
    const limits = this.latest ? rateLimitStatus(this.latest, now) : undefined;
    if (this.policy !== "plan-only") return limits;
    return limits ? `${limits} · plan only` : "Claude Code: plan limits only";
  }

  /** Claude Code's latest event said requests draw extra usage. */
  usingOverage(): boolean {
    return this.latest?.usingOverage === true;
  }

  /** Every window Claude Code has reported, latest state each. */
  reported(): RateLimitState[] {
    return [...this.windows.values()];
  }

  private blocking(): RateLimitState | undefined {
    const limit = this.exhausted;
    if (this.policy !== "plan-only" || !limit) return undefined;
    if (limit.resetsAtMs !== undefined && this.now() >= limit.resetsAtMs) {
      this.exhausted = undefined;
      return undefined;
    }
    return limit;
  }
}

/**
 * Neither Pi line may retry this (it would only be refused again): no word of Pi 0.73's retry pattern,
 * and "quota exceeded", which Pi 1.x never retries. It names the window and when it resets.
 */
export function spendRefusedMessage(limit: RateLimitState, nowMs: number): string {
  const reset =
    limit.resetsAtMs !== undefined
      ? `; it ${resetText(limit.resetsAtMs, nowMs)}`
      : "; its reset time is unknown";
  return (
    `Claude Code: extra usage refused, plan quota exceeded (${limitName(limit.window)} used up)${reset}. ` +
    `${SPEND_VARIABLE}=plan-only keeps this provider from sending what would be billed as extra usage; nothing was sent.`
  );
}
