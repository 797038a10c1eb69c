import type { ToolCallLedger } from "@bridgeworks/delivery-reconciler";
import type { ClaudeStreamSink, ClaudeTurnOutcome } from "./claude-stream.js";
import type { KeepWarmOutcome } from "./keep-warm.js";
import type { ConversationMessage } from "./query-state.js";
import type { RateLimitState } from "./rate-limits.js";
import type { SessionDiag } from "./session-diag.js";
import { refusedCallText } from "./tool-arguments.js";
import type { PiTurn } from "./turn.js";
import type { TurnReceipts } from "./turn-receipt.js";

/** What a session keeps of what one of its queries' Claude Code says. */
export interface SessionRecorders {
  readonly ledger: ToolCallLedger<ConversationMessage>;
  readonly receipts: TurnReceipts;
  readonly diag: SessionDiag;
  /** The ids of the tool calls this query's Claude made. */
  readonly issued: Set<string>;
  readonly noteClaudeCodeVersion: (version: string) => void;
}

/** What the session itself does about it. */
export interface SessionReactions {
  /** The Pi stream open now, if any. */
  readonly openTurn: () => PiTurn | undefined;
  readonly sessionReported: (sessionId: string) => void;
  /** Claude's message ended and the open stream carries tool calls: Pi may run them. */
  readonly toolCallsComplete: () => void;
  readonly turnEnded: (outcome: ClaudeTurnOutcome) => void;
  readonly rateLimited: (state: RateLimitState) => void;
}

/** The sink a session's `ClaudeStreamReader` reports to: the ledger, the receipt, the diagnostics, the session. */
export function sessionStreamSink(
  recorders: SessionRecorders,
  reactions: SessionReactions,
): ClaudeStreamSink {
  const { ledger, receipts, diag, issued } = recorders;
  return {
    openTurn: reactions.openTurn,
    onSessionId: (sessionId, version) => {
      if (version) recorders.noteClaudeCodeVersion(version);
      reactions.sessionReported(sessionId);
    },
    onUsage: (usage, fresh) => (fresh ? receipts.beginRequest(usage) : receipts.updateUsage(usage)),
    onToolUse: (call) => {
      issued.add(call.id);
      const turn = reactions.openTurn();
      if (ledger.recordToolUse(call) === "stream" && turn) turn.pushToolCall(call);
    },
    onInvalidToolUse: ({ id, name, problem }) => {
      issued.add(id);
      ledger.refuseToolUse({ id, name }, refusedCallText(id, name, problem));
    },
    onMessageStop: () => {
      // Every tool_use block of the message is on the stream now: Pi may run them.
      if (reactions.openTurn()?.hasToolCalls) reactions.toolCallsComplete();
    },
    onTurnEnd: reactions.turnEnded,
    onNotice: (notice) => {
      if (notice.type === "api_retry") diag.apiRetry(notice.status);
      else if (notice.type === "rate_limit") reactions.rateLimited(notice.state);
      else diag.contentWithoutStream(notice.block);
    },
  };
}

/** Where a query's keep-warm side questions are accounted: the diagnostics log, and the run's receipt. */
export function keepWarmReport(
  receipts: TurnReceipts,
  diag: SessionDiag,
): (outcome: KeepWarmOutcome) => void {
  return (outcome) => {
    diag.keepWarm(outcome);
    if (outcome.outcome === "sent") receipts.keptWarm();
  };
}
