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
