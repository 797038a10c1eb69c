import { USAGE_LIMIT_ERROR_PREFIXES } from "@anthropic-ai/claude-agent-sdk";

/** Claude Code's `rate_limit_event` (subscription auth), normalized: reset in ms, utilization 0..1. */
export interface RateLimitState {
  readonly status: string;
  /** e.g. `five_hour`, `seven_day`. */
  readonly window: string | undefined;
  readonly resetsAtMs: number | undefined;
  readonly utilization: number | undefined;
  /** Extra usage's own status (`allowed`, `allowed_warning`, `rejected`), when Claude Code named it. */
  readonly overageStatus?: string | undefined;
  /**
   * Claude Code's `isUsingOverage`: the window is used up and the request was let through on extra
   * usage (2.1.332 sets it when the API says `unified-status: rejected` and `unified-overage-status:
   * allowed` or `allowed_warning`).
   */
  readonly usingOverage?: boolean;
}

/** The event's `rate_limit_info`, whatever units it came in (kendex: seconds or ms; fraction or percent). */
export function rateLimitState(info: {
  status: string;
  resetsAt?: number | undefined;
  rateLimitType?: string | undefined;
  utilization?: number | undefined;
  overageStatus?: string | undefined;
  isUsingOverage?: boolean | undefined;
}): RateLimitState {
  const resetsAt = info.resetsAt;
  const utilization = info.utilization;
  return {
    status: info.status,
    window: info.rateLimitType,
    overageStatus: info.overageStatus,
    usingOverage: info.isUsingOverage === true,
    resetsAtMs:
      typeof resetsAt === "number" && resetsAt > 0
        ? resetsAt < 1e12
          ? resetsAt * 1000
          : resetsAt
        : undefined,
    utilization:
      typeof utilization === "number" && utilization >= 0
        ? Math.min(1, utilization > 1 ? utilization / 100 : utilization)
        : undefined,
  };
}

const windowNames: Record<string, string> = {
  five_hour: "5-hour",
  seven_day: "weekly",
  seven_day_opus: "weekly Opus",
  seven_day_sonnet: "weekly Sonnet",
  overage: "extra usage",
};

/** "5-hour limit", "weekly limit", or "usage limit" when Claude Code named no window. */
export function limitName(window: string | undefined): string {
  return `${(window && windowNames[window]) ?? "usage"} limit`;
}

/** "resets 14:17 UTC (in 1h 59m)". */
export function resetText(resetsAtMs: number, nowMs: number): string {
  const at = new Date(resetsAtMs).toISOString();
  const day = at.slice(0, 10) === new Date(nowMs).toISOString().slice(0, 10) ? "" : `${at.slice(0, 10)} `;
  return `resets ${day}${at.slice(11, 16)} UTC (in ${formatSpan(resetsAtMs - nowMs)})`;
}

/**
 * Pi's status line for the latest rate-limit event: the window, how much of it is used, when it
 * resets. Nothing when Claude Code says all is well.
 */
export function rateLimitStatus(state: RateLimitState, nowMs: number): string | undefined {
  if (state.status !== "allowed_warning" && state.status !== "rejected") return undefined;
  const reset = state.resetsAtMs !== undefined ? ` · ${resetText(state.resetsAtMs, nowMs)}` : "";
  if (state.status === "rejected") {
    const overage = state.usingOverage ? ", drawing extra usage" : "";
    return `Claude Code: ${limitName(state.window)} reached${overage}${reset}`;
  }
  const name = limitName(state.window);
  const used =
    state.utilization !== undefined
      ? `${Math.round(state.utilization * 100)}% of ${name} used`
      : `${name} nearly used`;
  return `Claude Code: ${used}${reset}`;
}

/** The fields of a `claude_rate_limit` diagnostics record. */
export function rateLimitFields(state: RateLimitState): {
  status: string;
  rateLimitType?: string;
  resetsAt?: string;
  utilization?: number;
  overageStatus?: string;
  usingOverage?: true;
} {
  return {
    status: state.status,
    ...(state.window ? { rateLimitType: state.window } : {}),
    ...(state.resetsAtMs !== undefined ? { resetsAt: new Date(state.resetsAtMs).toISOString() } : {}),
    ...(state.utilization !== undefined ? { utilization: state.utilization } : {}),
    ...(state.overageStatus ? { overageStatus: state.overageStatus } : {}),
    ...(state.usingOverage ? { usingOverage: true as const } : {}),
  };
}

/** Claude Code's own text for a subscription usage limit ("You've hit your 5-hour limit · resets …"). */
export function isUsageLimitText(text: string): boolean {
  const trimmed = text.trim();
  return USAGE_LIMIT_ERROR_PREFIXES.some((prefix) => trimmed.startsWith(prefix));
}

function formatSpan(ms: number): string {
  const minutes = Math.max(0, Math.ceil(ms / 60_000));
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const rest = minutes % 60;
  if (days > 0) return `${days}d ${hours}h`;
  return hours > 0 ? `${hours}h ${rest}m` : `${rest}m`;
}
