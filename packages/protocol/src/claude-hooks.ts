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
    // 2.1.332 sends an object ({"level": "medium"}, measured in a PermissionRequest input); never read.
    effort: z.unknown().optional(),
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

/** What a PermissionRequest hook reads on stdin (Claude Code 2.1.332, measured with `claude -p`). */
export const PermissionRequestHookInput = lazySchema(() =>
  HookInputBase.extend({
    hook_event_name: z.literal("PermissionRequest"),
    tool_name: z.string().min(1, "tool_name must not be empty"),
    tool_input: z.record(z.string(), z.unknown()),
    permission_suggestions: z.array(z.unknown()).optional(),
  }),
);
export type PermissionRequestHookInput = z.infer<typeof PermissionRequestHookInput>;

/**
 * A PermissionRequest hook's answer: allow the call, or deny it with a message the model reads as
 * the tool's result.
 */
export const PermissionRequestHookOutput = lazySchema(() =>
  z.strictObject({
    hookSpecificOutput: z.strictObject({
      hookEventName: z.literal("PermissionRequest"),
      decision: z.discriminatedUnion("behavior", [
        z.strictObject({ behavior: z.literal("allow") }),
        z.strictObject({ behavior: z.literal("deny"), message: z.string().min(1) }),
      ]),
    }),
  }),
);
export type PermissionRequestHookOutput = z.infer<typeof PermissionRequestHookOutput>;
