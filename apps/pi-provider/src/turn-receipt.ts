import type { ClaudeTurnReceipt, DeliveryDiagnosticRecord, RebuildReason } from "@bridgeworks/protocol";
import { type ConversationBreak, type RequestCacheView, rebuildReason } from "./rebuild-reason.js";
import type { AnthropicUsage } from "./turn.js";

type DroppedReason = ClaudeTurnReceipt["droppedToolResults"][number]["reason"];
const droppedReasons = new Set<string>([
  "deadline_expired",
  "result_unclaimed",
  "handler_cancelled",
  "aborted",
]);

interface RequestUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/**
 * What one Pi run cost and what went wrong in it, gathered as it happens: each model request's usage
 * (Claude Code's `message_start`, updated by `message_delta`), each cache rebuild with its reason, the
 * ledger's late and dropped results. `take()` hands the receipt over and starts the next one.
 */
export class TurnReceipts {
  /** The previous request of this Pi session (in this process): what a rebuild is measured against. */
  private previous: { model: string; settings: string } | undefined;
  private lastBreak: ConversationBreak | undefined;
  private requests: RequestUsage[] = [];
  private rebuilds: RebuildReason[] = [];
  private late = new Set<string>();
  private dropped = new Map<string, DroppedReason>();
  private refused = false;
  private keepWarm = 0;

  /** `taken`: each receipt as it is handed over (the diagnostics log). */
  constructor(private readonly taken: (receipt: ClaudeTurnReceipt) => void = () => {}) {}

  /** `message_start` of a main-chain Claude message: one model request. */
  beginRequest(usage: AnthropicUsage | undefined): void {
    this.requests.push({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
    this.updateUsage(usage);
  }

  /** `message_delta`: counts are the message's totals so far. */
  updateUsage(usage: AnthropicUsage | undefined): void {
    const request = this.requests.at(-1);
    if (!request || !usage) return;
    const take = (value: number | null | undefined, previous: number) =>
      typeof value === "number" ? value : previous;
    request.input = take(usage.input_tokens, request.input);
    request.output = take(usage.output_tokens, request.output);
    request.cacheRead = take(usage.cache_read_input_tokens, request.cacheRead);
    request.cacheWrite = take(usage.cache_creation_input_tokens, request.cacheWrite);
  }

  /** Pi asked for a model request, which the planner serves with `view.action`. */
  requested(view: Omit<RequestCacheView, "previous" | "lastBreak">): void {
    const reason = rebuildReason({ ...view, previous: this.previous, lastBreak: this.lastBreak });
    if (reason) this.rebuilds.push(reason);
    // A tool round goes on with the query's settings whatever Pi's are now (a model switched mid-run
    // takes effect at the next turn, which is measured against these).
    const midRound = view.action.kind === "continue" && view.action.midRound;
    if (!midRound || !this.previous) this.previous = { model: view.model, settings: view.settings };
    this.lastBreak = undefined;
  }

  /** Claude's conversation fell behind Pi's (the turn was aborted or failed, the session lost). */
  broke(kind: ConversationBreak): void {
    this.lastBreak = kind;
  }

  spendRefused(): void {
    this.refused = true;
  }

  /** A keep-warm side question was answered while Pi ran a tool. */
  keptWarm(): void {
    this.keepWarm += 1;
  }

  /** Every ledger record passes here: late results and calls settled without Pi's result. */
  noteLedger(record: DeliveryDiagnosticRecord): void {
    if (record.type === "tool_result_delivery") {
      for (const id of record.lateIds) this.late.add(id);
    } else if (
      record.type === "tool_call_ledger_transition" &&
      record.to === "failed" &&
      record.reason &&
      droppedReasons.has(record.reason)
    ) {
      this.dropped.set(record.toolCallId, record.reason as DroppedReason);
    }
  }

  /** The receipt so far (undefined when nothing happened) and a fresh start. */
  take(): ClaudeTurnReceipt | undefined {
    const empty =
      this.requests.length === 0 &&
      this.rebuilds.length === 0 &&
      this.late.size === 0 &&
      this.dropped.size === 0 &&
      !this.refused &&
      this.keepWarm === 0;
    const sum = (pick: (request: RequestUsage) => number) =>
      this.requests.reduce((total, request) => total + pick(request), 0);
    const receipt: ClaudeTurnReceipt = {
      requests: this.requests.length,
      inputTokens: sum((request) => request.input),
      outputTokens: sum((request) => request.output),
      cacheReadTokens: sum((request) => request.cacheRead),
      cacheWriteTokens: sum((request) => request.cacheWrite),
      rebuilds: this.rebuilds,
      lateToolResults: [...this.late],
      droppedToolResults: [...this.dropped].map(([id, reason]) => ({ id, reason })),
      ...(this.refused ? { spendRefused: true as const } : {}),
      ...(this.keepWarm > 0 ? { keepWarmRequests: this.keepWarm } : {}),
    };
    this.requests = [];
    this.rebuilds = [];
    this.late = new Set();
    this.dropped = new Map();
    this.refused = false;
    this.keepWarm = 0;
    if (empty) return undefined;
    this.taken(receipt);
    return receipt;
  }
}
