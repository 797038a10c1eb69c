import type {
  DeliveryDiagnosticRecord,
  DeliveryMismatchRecord,
  LedgerFailureReason,
  LedgerState,
  ToolCallId,
  ToolResultDeliveryRecord,
} from "@bridgeworks/protocol";
import type { Clock } from "./clock.js";
import type { LedgerDeadlines } from "./deadlines.js";
import type { StreamStall } from "./idle-watchdog.js";
import type { DiagnosticSink, ToolCall } from "./types.js";

// What a ledger is given and what it answers (ledger.ts).

export interface ToolCallLedgerOptions {
  readonly clock: Clock;
  /** Receives every diagnostic record; the app appends them to its JSONL log. */
  readonly sink: DiagnosticSink;
  /** Idle watchdog timeout (see `parseIdleTimeout`); 0 turns it off. Default 90 s. */
  readonly idleTimeoutMs?: number;
  /** A genuine stall: close Claude Code and end the Pi stream with `stall.message` as its error. */
  readonly onStall?: (stall: StreamStall) => void;
  readonly deadlines?: Partial<LedgerDeadlines>;
  readonly sessionId?: string;
  readonly queryId?: string;
  /** A sink that throws never breaks delivery; its error lands here. */
  readonly onSinkError?: (error: unknown, record: DeliveryDiagnosticRecord) => void;
}

/** Where a `tool_use` went: onto the open Pi stream, into the undelivered set, or nowhere (id known). */
export type ToolUseRoute = "stream" | "undelivered" | "duplicate";

/** `done`: the stream ended with a `done` event, so Pi executes its calls. `error`: Pi never gets them. */
export type StreamOutcome = "done" | "error";

export interface StreamStart {
  /** How the context's results were classified; the same record went to the sink. */
  readonly delivery: ToolResultDeliveryRecord;
  /**
   * Calls Claude emitted while no Pi stream was open. Push each as `toolcall_start`/`toolcall_end`
   * first, then end this stream with `done(toolUse)` and `endStream("done")`.
   */
  readonly flush: readonly ToolCall[];
}

export interface StreamEnd {
  readonly forwardedIds: readonly ToolCallId[];
  readonly undeliveredIds: readonly ToolCallId[];
}

export type QuiescenceResult =
  | { readonly quiescent: true }
  | { readonly quiescent: false; readonly mismatch: DeliveryMismatchRecord };

export interface LedgerEntryView {
  readonly id: ToolCallId;
  readonly toolName?: string;
  readonly state: LedgerState;
  readonly handlerWaiting: boolean;
  readonly reason?: LedgerFailureReason;
  /** When the current waiting state expires (clock time), if it waits. */
  readonly deadlineAt?: number;
}

export interface LedgerSnapshot {
  readonly streamOpen: boolean;
  readonly turnActive: boolean;
  /** Calls not yet resolved or failed: while any exist the idle watchdog is suppressed. */
  readonly liveCount: number;
  /** The calls of the current round (since the last quiescence check), in arrival order. */
  readonly entries: readonly LedgerEntryView[];
}
