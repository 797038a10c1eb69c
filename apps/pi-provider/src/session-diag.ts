import type { Clock } from "@bridgeworks/delivery-reconciler";
import type { ClaudeTurnReceipt } from "@bridgeworks/protocol";
import type { DiagWriter } from "./diag-log.js";
import type { KeepWarmOutcome } from "./keep-warm.js";
import type { QueryAction } from "./query-planner.js";
import { type RateLimitState, rateLimitFields } from "./rate-limits.js";
import type { WarmUpOutcome } from "./warm-up.js";

/** The provider's own diagnostics records for one Pi session (the ledger writes its own). */
export class SessionDiag {
  constructor(
    private readonly write: DiagWriter,
    private readonly clock: Clock,
    private readonly sessionId: string,
  ) {}

  queryStarted(
    action: Extract<QueryAction, { kind: "resume" | "resume-at" | "fresh" }>,
    replayedMessages: number,
    warm: boolean,
    successor = false,
  ): void {
    this.write({
      type: "claude_query_started",
      ...this.stamp(),
      resumed: action.kind !== "fresh",
      rewound: action.kind === "resume-at",
      replayedMessages,
      ...(warm ? { warm: true as const } : {}),
      ...(successor ? { successor: true as const } : {}),
    });
  }

  warmUp(outcome: WarmUpOutcome): void {
    this.write({ type: "claude_warm_up", ...this.stamp(), ...outcome });
  }

  queryEnded(detail: string): void {
    this.write({ type: "claude_query_ended", ...this.stamp(), detail: detail.slice(0, 500) });
  }

  flushed(ids: readonly string[]): void {
    this.write({ type: "undelivered_tool_calls_flushed", ...this.stamp(), ids: [...ids] });
  }

  apiRetry(status: number | null): void {
    this.write({ type: "claude_api_retry", ...this.stamp(), status });
  }

  rateLimit(state: RateLimitState): void {
    this.write({ type: "claude_rate_limit", ...this.stamp(), ...rateLimitFields(state) });
  }

  spendRefused(limit: RateLimitState): void {
    const { rateLimitType, resetsAt } = rateLimitFields(limit);
    this.write({
      type: "claude_spend_refused",
      ...this.stamp(),
      ...(rateLimitType ? { rateLimitType } : {}),
      ...(resetsAt ? { resetsAt } : {}),
    });
  }

  keepWarm(outcome: KeepWarmOutcome): void {
    this.write({ type: "claude_keep_warm", ...this.stamp(), ...outcome });
  }

  receipt(receipt: ClaudeTurnReceipt): void {
    this.write({ type: "claude_turn_receipt", ...this.stamp(), receipt });
  }

  contentWithoutStream(block: string): void {
    this.write({ type: "content_without_pi_stream", ...this.stamp(), block });
  }

  private stamp(): { at: string; sessionId: string } {
    return { at: new Date(this.clock.now()).toISOString(), sessionId: this.sessionId };
  }
}
