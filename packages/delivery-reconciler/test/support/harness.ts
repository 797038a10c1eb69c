import { DeliveryDiagnosticRecord, type LedgerTransitionRecord } from "@bridgeworks/protocol";
import { onTestFinished } from "vitest";
import {
  type LedgerDeadlines,
  type StreamStall,
  type ToolCall,
  ToolCallLedger,
  type ToolResult,
} from "../../src/index.js";
import { FakeClock } from "./fake-clock.js";
import { MessageFactory, type PiMessage } from "./pi-messages.js";

export interface HarnessOptions {
  idleTimeoutMs?: number;
  deadlines?: Partial<LedgerDeadlines>;
  sessionId?: string;
}

/**
 * A ledger on a fake clock whose sink keeps every record. Every record must parse with the protocol
 * schema; a test that made the ledger write a malformed one fails when it finishes.
 */
export function createHarness(options: HarnessOptions = {}) {
  const clock = new FakeClock();
  const records: DeliveryDiagnosticRecord[] = [];
  const invalidRecords: unknown[] = [];
  const stalls: StreamStall[] = [];
  const ledger = new ToolCallLedger<PiMessage>({
    clock,
    sink: (record) => {
      if (!DeliveryDiagnosticRecord.safeParse(record).success) invalidRecords.push(record);
      records.push(record);
    },
    onStall: (stall) => stalls.push(stall),
    ...options,
  });
  onTestFinished(() => {
    if (invalidRecords.length > 0) {
      throw new Error(`the ledger wrote records the protocol refuses: ${JSON.stringify(invalidRecords)}`);
    }
    ledger.dispose();
  });
  const transitions = (toolCallId?: string): LedgerTransitionRecord[] =>
    records.filter(
      (record): record is LedgerTransitionRecord =>
        record.type === "tool_call_ledger_transition" &&
        (toolCallId === undefined || record.toolCallId === toolCallId),
    );
  const messages = new MessageFactory();
  /** Claude's message over `context` calls `ids` (default name `bash`), and its stream ends. */
  const streamToolUses = (context: PiMessage[], ...ids: string[]): void => {
    ledger.beginStream(context);
    for (const id of ids) ledger.recordToolUse(call(id));
    ledger.endStream("done");
  };
  /** Pi appends the call to `id` and its result to `context`, and the next stream carries them. */
  const deliverResults = (context: PiMessage[], id: string) => {
    context.push(messages.assistant({ id }), messages.result(id));
    return ledger.beginStream(context);
  };
  return { clock, ledger, records, stalls, messages, transitions, streamToolUses, deliverResults };
}

export type Harness = ReturnType<typeof createHarness>;

export function call(id: string, name = "bash"): ToolCall {
  return { id, name, arguments: { command: `echo ${id}` } };
}

export interface Tracked<T> {
  readonly promise: Promise<T>;
  state: "pending" | "fulfilled" | "rejected";
  value?: T;
  error?: unknown;
}

/** Watches a promise without awaiting it, so a test can ask whether a handler is still waiting. */
export function track<T>(promise: Promise<T>): Tracked<T> {
  const tracked: Tracked<T> = { promise, state: "pending" };
  promise.then(
    (value) => {
      tracked.state = "fulfilled";
      tracked.value = value;
    },
    (error: unknown) => {
      tracked.state = "rejected";
      tracked.error = error;
    },
  );
  return tracked;
}

export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function deliveredText(result: ToolResult<PiMessage> | undefined): string | undefined {
  if (result?.kind !== "result" || result.message.role !== "toolResult") return undefined;
  return result.message.content[0]?.text;
}
