import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";

// Claude Code adds hook fields over time, so unknown keys pass through; the ones we read are checked.
const HookInputBase = lazySchema(() =>
  z.looseObject({
    session_id: z.string().min(1, "session_id must not be empty"),
    transcript_path: z.string(),
    cwd: z.string(),
    prompt_id: z.string().optional(),
    permission_mode: z.string().optional(),
    agent_id: z.string().optional(),
    agent_type: z.string().optional(),
    effort: z.string().optional(),
  }),
);

export const SessionStartSource = lazySchema(() => z.enum(["startup", "resume", "clear", "compact", "fork"]));
export type SessionStartSource = z.infer<typeof SessionStartSource>;

/** What a SessionStart hook reads on stdin. `/clear` sends no `model`. */
export const SessionStartHookInput = lazySchema(() =>
  HookInputBase.extend({
    hook_event_name: z.literal("SessionStart"),
    source: SessionStartSource,
    model: z.string().optional(),
    session_title: z.string().optional(),
    seconds_since_last_response: z.number().optional(),
    context_tokens: z.number().optional(),
    prompt_cache_likely_expired: z.boolean().optional(),
    estimated_cache_write_usd: z.number().optional(),
  }),
);
export type SessionStartHookInput = z.infer<typeof SessionStartHookInput>;

export const SessionEndReason = lazySchema(() =>
  z.enum(["clear", "resume", "logout", "prompt_input_exit", "other"]),
);
export type SessionEndReason = z.infer<typeof SessionEndReason>;

export const SessionEndHookInput = lazySchema(() =>
  HookInputBase.extend({
    hook_event_name: z.literal("SessionEnd"),
    reason: SessionEndReason,
  }),
);
export type SessionEndHookInput = z.infer<typeof SessionEndHookInput>;

export const SessionHookInput = lazySchema(() =>
  z.discriminatedUnion("hook_event_name", [SessionStartHookInput, SessionEndHookInput]),
);
export type SessionHookInput = z.infer<typeof SessionHookInput>;

/** What a SessionStart hook (or the `mcp_tool` hook's tool result) prints to add model context. */
export const SessionStartHookOutput = lazySchema(() =>
  z.strictObject({
    hookSpecificOutput: z.strictObject({
      hookEventName: z.literal("SessionStart"),
      additionalContext: z.string(),
    }),
  }),
);
export type SessionStartHookOutput = z.infer<typeof SessionStartHookOutput>;

/** Input of the hidden `bee_session_event` tool, filled in by the `mcp_tool` hook's `${...}` interpolation. */
export const SessionEventToolInput = lazySchema(() =>
  z.strictObject({
    session_id: z.string().min(1, "session_id must not be empty"),
    source: SessionStartSource,
  }),
);
export type SessionEventToolInput = z.infer<typeof SessionEventToolInput>;
