import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";

/**
 * What a `PreToolUse` command hook reads on stdin. Claude Code 2.1.332 and Codex 0.171 send the same
 * fields for it (measured with both binaries; Codex: codex-rs/hooks/src/events/pre_tool_use.rs,
 * `PreToolUseCommandInput`); each adds keys of its own, which pass through. `tool_use_id` is Claude's
 * `toolu_…` id and Codex's `call_id`. Codex names its shell tool `Bash`, the others by their own names.
 */
export const PreToolUseHookInput = lazySchema(() =>
  z.looseObject({
    hook_event_name: z.literal("PreToolUse"),
    session_id: z.string().min(1, "session_id must not be empty"),
    tool_name: z.string().min(1, "tool_name must not be empty"),
    tool_input: z.unknown(),
    tool_use_id: z.string().min(1, "tool_use_id must not be empty"),
    cwd: z.string().optional(),
  }),
);
export type PreToolUseHookInput = z.infer<typeof PreToolUseHookInput>;

/** The longest `inputPreview` a gate request carries, in UTF-16 code units. */
export const toolGateInputPreviewChars = 2_000;

/**
 * "May this tool call start?", sent by a turn's gate hook over its authenticated channel. The daemon
 * answers `allow` only after it has committed the call to its journal.
 */
export const ToolGateRequest = lazySchema(() =>
  z.strictObject({
    type: z.literal("tool_gate"),
    toolCallId: z.string().min(1, "toolCallId must not be empty").max(256, "toolCallId is too long"),
    toolName: z.string().min(1, "toolName must not be empty").max(256, "toolName is too long"),
    /** The call's input as JSON text, cut to `toolGateInputPreviewChars`. */
    inputPreview: z
      .string()
      .max(toolGateInputPreviewChars, `inputPreview must be at most ${toolGateInputPreviewChars} characters`),
  }),
);
export type ToolGateRequest = z.infer<typeof ToolGateRequest>;

/**
 * What a `PostToolUse` command hook reads on stdin once a tool call has finished: the same call's
 * `tool_use_id` as its `PreToolUse` (measured: claude 2.1.332 and codex 0.171, `gate-real.test.ts`).
 */
export const PostToolUseHookInput = lazySchema(() =>
  z.looseObject({
    hook_event_name: z.literal("PostToolUse"),
    tool_name: z.string().min(1, "tool_name must not be empty"),
    tool_use_id: z.string().min(1, "tool_use_id must not be empty"),
  }),
);
export type PostToolUseHookInput = z.infer<typeof PostToolUseHookInput>;

/** What a turn's hook reads: a call about to start, or one that finished. */
export const ToolHookInput = lazySchema(() =>
  z.discriminatedUnion("hook_event_name", [PreToolUseHookInput, PostToolUseHookInput]),
);
export type ToolHookInput = z.infer<typeof ToolHookInput>;

/**
 * "This admitted tool call finished", sent by a turn's hook after the call ran: recovery can then tell
 * a turn whose every call finished from one where a call may have run halfway.
 */
export const ToolCompletionRequest = lazySchema(() =>
  z.strictObject({
    type: z.literal("tool_completed"),
    toolCallId: ToolGateRequest.shape.toolCallId,
  }),
);
export type ToolCompletionRequest = z.infer<typeof ToolCompletionRequest>;

/** Everything a turn's hook sends over its gate channel. */
export const ToolHookRequest = lazySchema(() =>
  z.discriminatedUnion("type", [ToolGateRequest, ToolCompletionRequest]),
);
export type ToolHookRequest = z.infer<typeof ToolHookRequest>;

export const ToolGateAnswer = lazySchema(() =>
  z.discriminatedUnion("decision", [
    z.strictObject({ decision: z.literal("allow") }),
    z.strictObject({ decision: z.literal("deny"), reason: z.string().min(1, "reason must not be empty") }),
  ]),
);
export type ToolGateAnswer = z.infer<typeof ToolGateAnswer>;

/** What the journal records when the gate admits a tool call. */
export const ToolAdmissionDraft = lazySchema(() =>
  z.strictObject({
    toolCallId: ToolGateRequest.shape.toolCallId,
    toolName: ToolGateRequest.shape.toolName,
    inputPreview: ToolGateRequest.shape.inputPreview,
    /** The session declared this tool effect-free: admitting it records no effect. */
    effectFree: z.boolean(),
  }),
);
export type ToolAdmissionDraft = z.infer<typeof ToolAdmissionDraft>;

export const ToolAdmission = lazySchema(() =>
  ToolAdmissionDraft.extend({
    turnId: z.string().min(1),
    /** The index of its `tool.admitted` event in the turn. */
    eventIndex: z.number().int().nonnegative(),
    admittedAt: z.iso.datetime({ offset: true }),
    /** When its hook reported the call finished; absent: it may not have run, or may have run halfway. */
    completedAt: z.iso.datetime({ offset: true }).optional(),
  }),
);
export type ToolAdmission = z.infer<typeof ToolAdmission>;
