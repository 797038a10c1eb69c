import type { ToolCallId, ToolResultDeliveryRecord } from "@bridgeworks/protocol";
import type { ContextIndex } from "./context-index.js";
import type { LedgerDiagnostics } from "./ledger-diagnostics.js";
import type { ArchivedEntry, Entry } from "./ledger-entry.js";
import type { ContextMessage } from "./types.js";

/** What delivering a context's results reads and changes of a ledger. */
export interface DeliveryLedger<M extends ContextMessage> {
  readonly context: ContextIndex;
  /** Calls since the last quiescence check. */
  readonly round: ReadonlyMap<ToolCallId, Entry<M>>;
  readonly live: ReadonlyMap<ToolCallId, Entry<M>>;
  readonly archive: ReadonlyMap<ToolCallId, ArchivedEntry>;
  /** Ids of `toolCall` blocks in the context that the ledger never recorded. */
  readonly foreignCallIds: Set<string>;
  readonly diagnostics: LedgerDiagnostics;
  /** Pi's result for a live call: handed to its waiting handler, or queued for the handler to come. */
  acceptResult(entry: Entry<M>, message: M): "resolved" | "queued";
  /** A forwarded call whose result the context lacks, seen the first time: recorded, its deadline shortened. */
  noteMissing(entry: Entry<M>): void;
}

/**
 * Delivers the results in Pi's whole context (only the part appended since the previous call is read)
 * and classifies each: extracted, present but not extracted, missing, duplicate, late, foreign or
 * unknown (refused, never paired). The record goes to the sink and is returned.
 */
export function deliverResults<M extends ContextMessage>(
  ledger: DeliveryLedger<M>,
  messages: readonly M[],
): ToolResultDeliveryRecord {
  const extractedIds: ToolCallId[] = [];
  const presentButNotExtractedIds: ToolCallId[] = [];
  const resolvedIds: ToolCallId[] = [];
  const queuedIds: ToolCallId[] = [];
  const duplicateIds = new Set<ToolCallId>();
  const lateIds = new Set<ToolCallId>();
  const foreignIds = new Set<ToolCallId>();
  const unknownIds = new Set<ToolCallId>();
  const deliveredAt: { id: ToolCallId; index: number }[] = [];
  const seenInThisContext = new Set<string>();
  let malformedCount = 0;
  // Reading from the start (first context, compaction), everything before this ledger's first call
  // is history: a result there whose call was compacted away is not an unknown delivery.
  let pastHistory = true;
  const knows = (id: string) => ledger.round.has(id) || ledger.archive.has(id);

  const walk = ledger.context.walk(messages, ledger.live.size > 0, {
    start: (mode) => {
      pastHistory = mode === "incremental";
    },
    toolCall: (id) => {
      if (knows(id)) pastHistory = true;
      else ledger.foreignCallIds.add(id);
    },
    toolResult: (id, message, index) => {
      if (knows(id)) pastHistory = true;
      if (seenInThisContext.has(id)) {
        duplicateIds.add(id);
        return;
      }
      seenInThisContext.add(id);
      const entry = ledger.round.get(id);
      if (entry && !entry.settled) {
        if (entry.delivered) {
          duplicateIds.add(id);
          return;
        }
        deliveredAt.push({ id, index });
        (ledger.acceptResult(entry, message) === "resolved" ? resolvedIds : queuedIds).push(id);
        return;
      }
      const settled = entry
        ? { state: entry.settled!.state, delivered: entry.delivered }
        : ledger.archive.get(id);
      if (settled) (settled.state === "resolved" || settled.delivered ? duplicateIds : lateIds).add(id);
      else if (ledger.foreignCallIds.has(id) || !pastHistory) foreignIds.add(id);
      else unknownIds.add(id);
    },
    malformedResult: () => {
      malformedCount++;
    },
  });

  if (walk.rescan) {
    ledger.diagnostics.emit({
      type: "tool_result_context_rescan",
      ...ledger.diagnostics.stamp(),
      reason: walk.rescan.reason,
      previousWatermark: walk.rescan.previousWatermark,
      length: walk.length,
    });
  }
  for (const { id, index } of deliveredAt) {
    (index > walk.lastAssistantIndex ? extractedIds : presentButNotExtractedIds).push(id);
  }
  const missingFromContextIds: ToolCallId[] = [];
  for (const entry of ledger.live.values()) {
    if (entry.progress !== "forwarded" || entry.delivered) continue;
    missingFromContextIds.push(entry.id);
    if (!entry.missing) ledger.noteMissing(entry);
  }
  const record: ToolResultDeliveryRecord = {
    type: "tool_result_delivery",
    ...ledger.diagnostics.stamp(),
    scan: {
      mode: walk.mode,
      from: walk.from,
      length: walk.length,
      messagesExamined: walk.messagesExamined,
    },
    extractedIds,
    presentButNotExtractedIds,
    missingFromContextIds,
    duplicateIds: [...duplicateIds],
    lateIds: [...lateIds],
    foreignIds: [...foreignIds],
    unknownIds: [...unknownIds],
    resolvedIds,
    queuedIds,
    malformedCount,
  };
  ledger.diagnostics.emit(record);
  return record;
}
