import { appendFileSync } from "node:fs";
import {
  type CacheStability,
  cacheStability,
  lastUserText,
  type ModelDouble,
  promptPrefixUnits,
  type RecordedRequest,
} from "@bridgeworks/model-double";
import type { ClaudeTurnReceipt, RebuildReason } from "@bridgeworks/protocol";

/** The variable naming a JSONL file that collects one row per scenario (the table of docs/prompt-cache.md). */
export const CACHE_REPORT_VARIABLE = "PI_CACHE_REPORT";

export interface CacheRow {
  readonly pi: string;
  readonly scenario: string;
  readonly requests: number;
  readonly rebuilds: number;
  /** Rebuilds the scenario itself forces (a model switch, a compaction): at most this many are allowed. */
  readonly forced: number;
  readonly rebuiltChars: number;
  /** The rebuild reasons the provider's receipts gave, in order. */
  readonly reasons: readonly RebuildReason[];
}

/**
 * The Pi conversation of a scenario: every model request but Pi's one-shot summaries (compaction and
 * branch summaries quote the conversation as `[User]: …`), which are conversations of their own.
 */
export function piConversationOf(request: RecordedRequest): string | undefined {
  return lastUserText("anthropic", request.body).includes("[User]:") ? undefined : "pi";
}

export function conversationCache(double: ModelDouble): CacheStability {
  return cacheStability(double.requests, { conversationOf: piConversationOf });
}

/** Where each rebuild cut the previous request's cached prefix: the two units that differ there. */
export function explainRebuilds(double: ModelDouble, stability: CacheStability): string {
  const byIndex = new Map(double.requests.map((request) => [request.index, request]));
  const conversation = stability.requests;
  return conversation
    .flatMap((entry, position) => {
      if (!entry.rebuild) return [];
      const before = conversation
        .slice(0, position)
        .findLast((other) => other.conversation === entry.conversation)!;
      const previous = promptPrefixUnits(byIndex.get(before.index)?.body);
      const current = promptPrefixUnits(byIndex.get(entry.index)?.body);
      const at = entry.commonWithPrevious ?? 0;
      const show = (key: string | undefined) => (key === undefined ? "(nothing)" : key.slice(0, 400));
      return [
        `request #${entry.index} kept ${at} of the ${entry.previousCachedPrefix} cached units of #${before.index};` +
          `\n  was: ${show(previous[at]?.key)}\n  now: ${show(current[at]?.key)}`,
      ];
    })
    .join("\n");
}

export function cacheRow(
  pi: string,
  scenario: string,
  forced: number,
  stability: CacheStability,
  reasons: readonly RebuildReason[],
): CacheRow {
  return {
    pi,
    scenario,
    requests: stability.requests.length,
    rebuilds: stability.rebuilds,
    forced,
    rebuiltChars: stability.requests.reduce((sum, entry) => sum + entry.rebuiltChars, 0),
    reasons,
  };
}

/** Every rebuild reason in the receipts of a diagnostics log, in order. */
export function receiptRebuilds(
  records: ReadonlyArray<{ type: string; receipt?: unknown }>,
): RebuildReason[] {
  return records.flatMap((record) =>
    record.type === "claude_turn_receipt" ? (record.receipt as ClaudeTurnReceipt).rebuilds : [],
  );
}

/** Appends the row to `PI_CACHE_REPORT` when the run was asked for a report. */
export function reportCacheRow(row: CacheRow, env: NodeJS.ProcessEnv = process.env): void {
  const path = env[CACHE_REPORT_VARIABLE];
  if (path) appendFileSync(path, `${JSON.stringify(row)}\n`);
}
