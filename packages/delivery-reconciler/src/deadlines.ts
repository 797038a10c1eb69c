import { MAX_TIMER_DELAY_MS } from "./idle-timeout.js";
import { formatDuration } from "./stall-message.js";

/**
 * How long each waiting state may last. When one expires the call fails: its handler (now or when it
 * arrives) gets an `isError` result, and a `deadline_expired` transition is recorded.
 */
export interface LedgerDeadlines {
  /** On an open Pi stream, waiting for Claude's message to end (`message_stop`) so Pi gets the call. */
  readonly emittedMs: number;
  /** Seen while no Pi stream was open, waiting for the next stream to flush it. */
  readonly undeliveredMs: number;
  /** Handed to Pi, waiting for its result. Tools can legitimately run long: this is a backstop. */
  readonly executingMs: number;
  /** Handed to Pi, but a later context came without its result: Pi will not send it any more. */
  readonly missingResultMs: number;
  /** Pi's result is queued, waiting for Claude Code to invoke the handler. */
  readonly queuedMs: number;
  /** A handler for an id no `tool_use` block named, once no Pi stream is open (the turn ended). */
  readonly strandedHandlerMs: number;
}

export const defaultDeadlines: LedgerDeadlines = {
  emittedMs: 120_000,
  undeliveredMs: 60_000,
  executingMs: 60 * 60_000,
  missingResultMs: 15_000,
  queuedMs: 60_000,
  strandedHandlerMs: 5_000,
};

export function resolveDeadlines(overrides: Partial<LedgerDeadlines> = {}): LedgerDeadlines {
  const deadlines = { ...defaultDeadlines, ...overrides };
  for (const [field, value] of Object.entries(deadlines)) {
    if (!Number.isInteger(value) || value <= 0 || value > MAX_TIMER_DELAY_MS) {
      throw new RangeError(
        `deadlines.${field} must be a whole number of milliseconds in 1..${MAX_TIMER_DELAY_MS}, got ${String(value)}`,
      );
    }
  }
  return deadlines;
}

/** The waiting state a deadline guards; `stranded_streaming` is a nameless handler during a stream. */
export type DeadlinePhase =
  | "emitted"
  | "undelivered"
  | "executing"
  | "missing"
  | "queued"
  | "stranded_streaming"
  | "stranded";

export function phaseDurationMs(phase: DeadlinePhase, deadlines: LedgerDeadlines): number {
  switch (phase) {
    case "emitted":
    case "stranded_streaming":
      return deadlines.emittedMs;
    case "undelivered":
      return deadlines.undeliveredMs;
    case "executing":
      return deadlines.executingMs;
    case "missing":
      return deadlines.missingResultMs;
    case "queued":
      return deadlines.queuedMs;
    case "stranded":
      return deadlines.strandedHandlerMs;
  }
}

/** Whether Pi can have run the call: if it cannot, the model may safely retry. */
export function piMayHaveRun(phase: DeadlinePhase): boolean {
  return phase === "executing" || phase === "missing" || phase === "queued";
}

export function expiryText(phase: DeadlinePhase, toolCallId: string, waitedMs: number): string {
  const waited = formatDuration(waitedMs);
  switch (phase) {
    case "emitted":
      return `Tool call ${toolCallId} was not run: the message that requested it did not finish within ${waited}, so it never reached Pi. It is safe to call the tool again.`;
    case "undelivered":
      return `Tool call ${toolCallId} was not run: it arrived while Pi was not listening and no later request picked it up within ${waited}. It is safe to call the tool again.`;
    case "stranded_streaming":
    case "stranded":
      return `Tool call ${toolCallId} was not run: no tool_use block with this id reached Pi before the turn ended (waited ${waited}). It is safe to call the tool again.`;
    case "executing":
      return `Tool call ${toolCallId} produced no result within ${waited}; its outcome is unknown. Check its effects before calling it again.`;
    case "missing":
      return `Tool call ${toolCallId} was handed to Pi, but Pi's next request did not carry its result (waited ${waited}); its outcome is unknown. Check its effects before calling it again.`;
    case "queued":
      return `Tool call ${toolCallId}: its result waited ${waited} for a handler that never came.`;
  }
}

export function abortText(reason: string | undefined): string {
  return reason ? `Operation aborted: ${reason}` : "Operation aborted";
}
