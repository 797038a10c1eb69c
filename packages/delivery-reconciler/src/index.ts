export { type Clock, createSystemClock } from "./clock.js";
export { defaultDeadlines, type LedgerDeadlines } from "./deadlines.js";
export {
  HandlerCancelledError,
  type HandlerRefusal,
  HandlerRefusedError,
  LedgerDisposedError,
} from "./errors.js";
export {
  DEFAULT_IDLE_TIMEOUT_MS,
  IDLE_TIMEOUT_VARIABLE,
  type IdleTimeoutError,
  type IdleTimeoutSetting,
  idleTimeoutFromEnv,
  parseDuration,
  parseIdleTimeout,
} from "./idle-timeout.js";
export type { StreamStall } from "./idle-watchdog.js";
export { ToolCallLedger } from "./ledger.js";
// Every type a ledger is given or answers with.
export type * from "./ledger-types.js";
export { streamIdleTimeoutMessage } from "./stall-message.js";
export type {
  ContextMessage,
  DeliveredToolResult,
  DiagnosticSink,
  FailedToolResult,
  ToolCall,
  ToolResult,
} from "./types.js";
