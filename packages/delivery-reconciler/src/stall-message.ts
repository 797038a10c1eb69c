/**
 * The error text for a genuine stall, as Pi shows it in `errorMessage` with `stopReason: "error"`.
 *
 * Pi 0.73.1 auto-retries such a message only if it matches `_isRetryableError`
 * (@mariozechner/pi-coding-agent dist/core/agent-session.js:1931):
 *   /overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|
 *    service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|
 *    connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|
 *    fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|
 *    http2 request did not get a response|timed? out|timeout|terminated|retry delay/i
 * and only if it is not a context overflow (@mariozechner/pi-ai dist/utils/overflow.js
 * `isContextOverflow`), which goes to compaction instead. So the text says "overloaded" and "timeout"
 * and avoids the overflow wording ("too many tokens", "context length", "prompt is too long").
 */
export function streamIdleTimeoutMessage(timeoutMs: number): string {
  return `Claude Code stream idle timeout after ${formatDuration(timeoutMs)} with no tool call pending; treating the stalled stream as a retryable overloaded error`;
}

export function formatDuration(ms: number): string {
  if (ms % 60_000 === 0 && ms >= 60_000) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
