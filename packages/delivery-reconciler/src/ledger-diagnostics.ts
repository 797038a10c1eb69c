import type {
  DeliveryDiagnosticRecord,
  LedgerEvent,
  LedgerFailureReason,
  LedgerState,
  ToolCallId,
} from "@bridgeworks/protocol";
import type { Clock } from "./clock.js";
import { type ArchivedEntry, type Entry, stateOf } from "./ledger-entry.js";
import type { ToolCallLedgerOptions } from "./ledger-types.js";
import type { ContextMessage } from "./types.js";

/** The ledger's records to its sink: each stamped with the time and the session and query, if known. */
export class LedgerDiagnostics {
  readonly #clock: Clock;
  readonly #options: ToolCallLedgerOptions;

  constructor(options: ToolCallLedgerOptions) {
    this.#clock = options.clock;
    this.#options = options;
  }

  /** One `tool_call_ledger_transition`: the entry moved `from` a state to the one it is in now. */
  transition<M extends ContextMessage>(
    entry: Entry<M>,
    event: LedgerEvent,
    from: LedgerState | null,
    extra: { reason?: LedgerFailureReason; detail?: string } = {},
  ): void {
    this.emit({
      type: "tool_call_ledger_transition",
      ...this.stamp(),
      toolCallId: entry.id,
      ...(entry.call?.name ? { toolName: entry.call.name } : {}),
      event,
      from,
      to: stateOf(entry),
      handlerWaiting: entry.waiter !== undefined,
      ...extra,
    });
  }

  /** A transition of an archived call, which stays in its state. */
  archivedTransition(id: ToolCallId, archived: ArchivedEntry, event: LedgerEvent): void {
    this.emit({
      type: "tool_call_ledger_transition",
      ...this.stamp(),
      toolCallId: id,
      event,
      from: archived.state,
      to: archived.state,
      handlerWaiting: false,
      ...(archived.reason ? { reason: archived.reason } : {}),
    });
  }

  stamp(): { at: string; sessionId?: string; queryId?: string } {
    return {
      at: new Date(this.#clock.now()).toISOString(),
      ...(this.#options.sessionId ? { sessionId: this.#options.sessionId } : {}),
      ...(this.#options.queryId ? { queryId: this.#options.queryId } : {}),
    };
  }

  /** A sink that throws never breaks delivery: its error goes to `onSinkError`. */
  emit(record: DeliveryDiagnosticRecord): void {
    try {
      this.#options.sink(record);
    } catch (error) {
      this.#options.onSinkError?.(error, record);
    }
  }
}
