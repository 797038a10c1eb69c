import type { SDKAssistantMessageError } from "@anthropic-ai/claude-agent-sdk";
import { limitName, type RateLimitState, resetText } from "./rate-limits.js";

/**
 * Pi's wording for a Claude Code API error. Pi retries an error whose text matches its auto-retry
 * pattern (`overloaded|rate.?limit|429|5xx|server.?error|timeout|terminated|…`), so transient errors
 * name their kind in those words; permanent ones (authentication, invalid request) must not.
 */
export function apiErrorMessage(code: SDKAssistantMessageError | undefined, detail: string): string {
  const text = detail.trim() || "no detail";
  switch (code) {
    case "rate_limit":
      return `Claude Code: rate limit exceeded (429), retry later: ${text}`;
    case "overloaded":
      return `Claude Code: API overloaded (529), retry later: ${text}`;
    case "server_error":
      return /\b529\b/.test(text)
        ? `Claude Code: API overloaded (529), retry later: ${text}`
        : `Claude Code: API server error, retry later: ${text}`;
    case undefined:
      return `Claude Code: ${text}`;
    default:
      return `Claude Code (${code}): ${text}`;
  }
}

/**
 * A subscription usage limit resets after hours: retrying now only fails again. So no word Pi 0.73
 * retries on, and "quota exceeded", which Pi 1.x never retries; the user reads which limit and when
 * it resets.
 */
export function usageLimitMessage(detail: string, limit: RateLimitState | undefined, nowMs: number): string {
  const reset = limit?.resetsAtMs !== undefined ? `; it ${resetText(limit.resetsAtMs, nowMs)}` : "";
  return `Claude Code: usage quota exceeded (${limitName(limit?.window)})${reset}. ${detail.trim()}`;
}

/**
 * Claude Code has no transcript of the session it was asked to resume (deleted, cleaned up after its
 * retention period): retryable, and the retry tells Pi's history to a new Claude session.
 */
export function sessionLostMessage(detail: string): string {
  return `Claude Code could not resume the conversation (${detail.trim()}); request terminated, a retry starts a new Claude session`;
}

/** Claude Code stopped answering (exited, crashed): retryable, Pi starts it again. */
export function processEndedMessage(detail: string): string {
  return `Claude Code process terminated unexpectedly; retry: ${detail.trim() || "no detail"}`;
}
