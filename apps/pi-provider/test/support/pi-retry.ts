/** Pi 0.73.1's auto-retry test (agent-session.js `_isRetryableError`), and the same in Pi 1.6. */
export const piRetryable =
  /overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|http2 request did not get a response|timed? out|timeout|terminated|retry delay/i;

/**
 * Pi 1.6's account-limit errors it never retries (pi-ai 1.6.0 dist/utils/retry.js
 * NON_RETRYABLE_PROVIDER_LIMIT_ERROR_PATTERN), the part a Claude usage limit can match.
 */
export const pi1NonRetryable =
  /Monthly usage limit reached|insufficient_quota|out of budget|quota exceeded|billing/i;
