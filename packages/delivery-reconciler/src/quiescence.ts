import type { DeliveryMismatchRecord } from "@bridgeworks/protocol";
import type { Entry } from "./ledger-entry.js";
import type { ContextMessage } from "./types.js";

/** The `tool_result_delivery_mismatch` record of a round that is not quiescent: where each call is. */
export function mismatchOf<M extends ContextMessage>(
  entries: readonly Entry<M>[],
  trigger: string,
  stamp: { at: string; sessionId?: string; queryId?: string },
): DeliveryMismatchRecord {
  const ids = (keep: (entry: Entry<M>) => boolean) => entries.filter(keep).map((entry) => entry.id);
  const isLive = (entry: Entry<M>) => entry.settled === undefined;
  const expectedIds = ids(() => true);
  const deliveredIds = ids((entry) => entry.delivered);
  const resolvedIds = ids((entry) => entry.settled?.state === "resolved");
  const waitingIds = ids((entry) => entry.waiter !== undefined);
  return {
    type: "tool_result_delivery_mismatch",
    ...stamp,
    trigger,
    expectedCount: expectedIds.length,
    deliveredCount: deliveredIds.length,
    resolvedCount: resolvedIds.length,
    waitingCount: waitingIds.length,
    expectedIds,
    deliveredIds,
    resolvedIds,
    waitingIds,
    queuedIds: ids((entry) => isLive(entry) && entry.queued !== undefined),
    undeliveredIds: ids((entry) => isLive(entry) && !entry.delivered && entry.progress === "undelivered"),
    emittedIds: ids((entry) => isLive(entry) && !entry.delivered && entry.progress === "emitted"),
    executingIds: ids((entry) => isLive(entry) && !entry.delivered && entry.progress === "forwarded"),
    failedIds: ids((entry) => entry.settled?.state === "failed"),
  };
}
