import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";

/** The `customType` of the Pi session entry in which the Pi provider records its Claude session. */
export const CLAUDE_SESSION_ENTRY_TYPE = "claude-code-session";

/**
 * What the Pi provider records in Pi's session file (a custom entry, never sent to a model) after a
 * completed Claude turn, so a later Pi process (`pi --continue`) resumes the same Claude session at
 * that turn instead of telling the history to a new one. `checkpoint` is how far Pi's conversation
 * matched Claude's then: its first `length` messages, the last one recognised by `fingerprint`.
 */
export const ClaudeSessionRecord = lazySchema(() =>
  z.strictObject({
    claudeSessionId: z.string().min(1, "claudeSessionId must not be empty"),
    checkpoint: z.strictObject({
      length: z.number().int().nonnegative(),
      fingerprint: z.string().min(1, "fingerprint must not be empty").nullable(),
    }),
    /** Claude's last chain entry of that turn (`resumeSessionAt`); null when Claude Code reported none. */
    chainUuid: z.string().min(1, "chainUuid must not be empty").nullable(),
  }),
);
export type ClaudeSessionRecord = z.infer<typeof ClaudeSessionRecord>;

/** The `customType` of the Pi session entries in which the Pi provider records each run's receipt. */
export const CLAUDE_RECEIPT_ENTRY_TYPE = "claude-code-receipt";

/**
 * Why a request could not read the prompt cache its conversation had built (a **rebuild**):
 * - `model_switch`: another model (each model has its own cache);
 * - `settings_change`: the same model with another system prompt, thinking level or tool set;
 * - `compaction`: Pi compacted its history, so Claude is told the summary instead;
 * - `foreign_history`: Pi's history holds what Claude's session does not (another provider's turns,
 *   another branch), told to a new Claude session;
 * - `abort`, `failed_turn`: the user aborted, or a turn failed (API error, stall, Claude Code ended),
 *   before any turn had completed, so there was no completed turn to resume at;
 * - `lost_session`: Claude Code no longer had the Claude session to resume.
 */
export const RebuildReason = lazySchema(() =>
  z.enum([
    "model_switch",
    "settings_change",
    "compaction",
    "foreign_history",
    "abort",
    "failed_turn",
    "lost_session",
  ]),
);
export type RebuildReason = z.infer<typeof RebuildReason>;

const TokenCount = lazySchema(() => z.number().int().nonnegative());

/**
 * One Pi run (a prompt to its `agent_end`) served by the Pi provider, as it recorded it in Pi's
 * session file (a custom entry, never sent to a model) and in its diagnostics log: the model requests
 * Claude Code made and their tokens, the cache rebuilds with their reason, and any tool result that
 * came too late or was dropped (with why).
 */
export const ClaudeTurnReceipt = lazySchema(() =>
  z.strictObject({
    requests: TokenCount,
    inputTokens: TokenCount,
    outputTokens: TokenCount,
    cacheReadTokens: TokenCount,
    cacheWriteTokens: TokenCount,
    rebuilds: z.array(RebuildReason),
    /** Results Pi delivered for calls that had already failed (deadline, abort): Claude never got them. */
    lateToolResults: z.array(z.string().min(1)),
    /** Calls that settled without Pi's result reaching Claude Code. */
    droppedToolResults: z.array(
      z.strictObject({
        id: z.string().min(1),
        reason: z.enum(["deadline_expired", "result_unclaimed", "handler_cancelled", "aborted"]),
      }),
    ),
    /** The request was refused before anything was sent (`CLAUDE_BRIDGE_SPEND=plan-only`). */
    spendRefused: z.literal(true).optional(),
    /** Requests made while Pi ran a tool to keep Claude Code's prompt cache alive (`CLAUDE_BRIDGE_KEEP_WARM`). */
    keepWarmRequests: TokenCount.optional(),
  }),
);
export type ClaudeTurnReceipt = z.infer<typeof ClaudeTurnReceipt>;
