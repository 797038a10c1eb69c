import type { RebuildReason } from "@bridgeworks/protocol";
import type { QueryAction } from "./query-planner.js";
import type { ConversationMessage } from "./query-state.js";

/** What Pi puts before a compaction's summary (both Pi lines: `COMPACTION_SUMMARY_PREFIX`). */
export const COMPACTION_SUMMARY_PREFIX =
  "The conversation history before this point was compacted into the following summary:";

/** Why the last turn left Claude's conversation behind Pi's, if it did. */
export type ConversationBreak = "abort" | "failed_turn" | "lost_session";

/** One request's view of the cache: what it is, what came before it in this Pi session. */
export interface RequestCacheView {
  /** The planner's action for the request (a request always sends: continue, resume or fresh). */
  readonly action: QueryAction;
  readonly messages: readonly ConversationMessage[];
  /** This request's model id and settings (`settingsOf`), and the previous request's in this process. */
  readonly model: string;
  readonly settings: string;
  readonly previous: { readonly model: string; readonly settings: string } | undefined;
  /** How the conversation last fell behind Pi's (abort, failed turn, lost session), if it did since. */
  readonly lastBreak: ConversationBreak | undefined;
}

/**
 * Why this request cannot read the prompt cache its conversation built, or undefined when it can.
 * A request reads it when it goes on with Claude's conversation as it stands (continuing the query or
 * resuming the Claude session), with the model and settings of the request before it. One told Pi's
 * history from the start (a new Claude session) rebuilds whenever there was history to tell: why, is
 * what made the Claude session unusable.
 */
export function rebuildReason(view: RequestCacheView): RebuildReason | undefined {
  const { action, messages, previous } = view;
  if (action.kind === "none" || action.kind === "close") return undefined;
  if (action.kind === "continue" && action.midRound) return undefined;
  if (action.tellFrom === 0) {
    const compacted = firstText(messages[0]).startsWith(COMPACTION_SUMMARY_PREFIX);
    const hadHistory =
      compacted || previous !== undefined || messages.some((message) => message.role === "assistant");
    if (!hadHistory) return undefined;
    return view.lastBreak ?? (compacted ? "compaction" : "foreign_history");
  }
  if (previous === undefined) return undefined;
  if (previous.model !== view.model) return "model_switch";
  return previous.settings !== view.settings ? "settings_change" : undefined;
}

function firstText(message: ConversationMessage | undefined): string {
  if (message?.role !== "user") return "";
  if (typeof message.content === "string") return message.content;
  const first = message.content[0];
  return first?.type === "text" ? first.text : "";
}
