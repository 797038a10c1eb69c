import { z } from "zod";
import { DecisionActor } from "./confinement.js";
import { lazySchema } from "./lazy-schema.js";

/**
 * Identifier of a Floot session, turn or secret request. The journal mints UUIDv7 ids (sortable by
 * creation time); callers may bring their own ids as long as they match this shape.
 */
export const JournalId = lazySchema(() =>
  z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/,
      "id must be 1-128 characters of letters, digits, '.', '_', ':' or '-', starting with a letter or digit",
    ),
);
export type JournalId = z.infer<typeof JournalId>;

const IsoTimestamp = lazySchema(() =>
  z.iso.datetime({ offset: true, error: "timestamp must be an ISO 8601 date-time" }),
);
const NonNegativeInt = lazySchema(() => z.number().int().nonnegative());

export const Backend = lazySchema(() => z.enum(["claude", "codex"]));
export type Backend = z.infer<typeof Backend>;

/**
 * What a session is doing, derived from its turns: `provisioning` while its active turn is accepted or
 * spawning, `running` while it runs or waits for a secret, `idle` without an active turn, `stopped` once
 * the session was stopped (it takes no new turn).
 */
export const SessionStatus = lazySchema(() => z.enum(["idle", "provisioning", "running", "stopped"]));
export type SessionStatus = z.infer<typeof SessionStatus>;

export const SessionRecord = lazySchema(() =>
  z.strictObject({
    id: JournalId,
    backend: Backend,
    status: SessionStatus,
    /** The backend's conversation (Claude session UUID, Codex thread id) the next turn resumes. */
    conversationId: z.string().min(1).optional(),
    activeTurnId: JournalId.optional(),
    queuedTurns: NonNegativeInt,
    createdAt: IsoTimestamp,
    stoppedAt: IsoTimestamp.optional(),
    /**
     * What a list shows and searches: the title a person gave the session (`SessionTitle`), else its
     * first prompt (its first 200 characters).
     */
    title: z.string().optional(),
  }),
);
export type SessionRecord = z.infer<typeof SessionRecord>;

/**
 * One page of a session list, newest first (keyset): `cursor` is the `nextCursor` of the page before,
 * `status` keeps sessions in that status, `search` keeps those whose id starts with it or whose title
 * contains it (case-insensitive).
 */
export const SessionPageQuery = lazySchema(() =>
  z.strictObject({
    limit: z.number().int().min(1).max(500).optional(),
    cursor: z.string().min(1).max(200).optional(),
    status: SessionStatus.optional(),
    search: z.string().min(1).max(200).optional(),
  }),
);
export type SessionPageQuery = z.infer<typeof SessionPageQuery>;

/**
 * One page of the sessions waiting on a person (an open permission or secret request, or a decision on
 * a turn whose call may have run), the longest waiting first: `cursor` is the `nextCursor` of the page
 * before.
 */
export const WaitingSessionPageQuery = lazySchema(() =>
  z.strictObject({
    limit: z.number().int().min(1).max(500).optional(),
    cursor: z.string().min(1).max(200).optional(),
  }),
);
export type WaitingSessionPageQuery = z.infer<typeof WaitingSessionPageQuery>;

/** What creating a session takes; the journal mints an id when none is given. */
export const SessionDraft = lazySchema(() =>
  z.strictObject({
    id: JournalId.optional(),
    backend: Backend,
  }),
);
export type SessionDraft = z.infer<typeof SessionDraft>;

/**
 * `queued` waits behind the session's active turn. `accepted` is committed and will run; it then moves
 * through spawning -> running -> (awaiting_secret) to exactly one terminal phase.
 */
export const TurnPhase = lazySchema(() =>
  z.enum([
    "queued",
    "accepted",
    "spawning",
    "running",
    "awaiting_secret",
    "completed",
    "failed",
    "cancelled",
    "interrupted",
  ]),
);
export type TurnPhase = z.infer<typeof TurnPhase>;

export const terminalTurnPhases = ["completed", "failed", "cancelled", "interrupted"] as const;
export const TerminalTurnPhase = lazySchema(() => TurnPhase.extract(terminalTurnPhases));
export type TerminalTurnPhase = z.infer<typeof TerminalTurnPhase>;

/** Phases that hold a session's single active slot. */
export const activeTurnPhases = ["accepted", "spawning", "running", "awaiting_secret"] as const;
export const ActiveTurnPhase = lazySchema(() => TurnPhase.extract(activeTurnPhases));
export type ActiveTurnPhase = z.infer<typeof ActiveTurnPhase>;

export function isTerminalTurnPhase(phase: TurnPhase): phase is TerminalTurnPhase {
  return (terminalTurnPhases as readonly TurnPhase[]).includes(phase);
}

export function isActiveTurnPhase(phase: TurnPhase): phase is ActiveTurnPhase {
  return (activeTurnPhases as readonly TurnPhase[]).includes(phase);
}

export const TurnInput = lazySchema(() =>
  z.strictObject({
    prompt: z.string().min(1, "prompt must not be empty"),
  }),
);
export type TurnInput = z.infer<typeof TurnInput>;

export const TurnError = lazySchema(() =>
  z.strictObject({
    code: z.string().min(1, "error code must not be empty"),
    message: z.string(),
  }),
);
export type TurnError = z.infer<typeof TurnError>;

/** The CLI process of a turn: fenced after a restart only when both pid and start time still match. */
export const CliProcess = lazySchema(() =>
  z.strictObject({
    pid: z.number().int().positive(),
    /** Opaque start-time token (e.g. field 22 of /proc/<pid>/stat), compared verbatim. */
    startTime: z.string().min(1, "process start time must not be empty"),
  }),
);
export type CliProcess = z.infer<typeof CliProcess>;

/**
 * 16 CSPRNG bytes in hex, journaled with `spawning` before the CLI is spawned with it in its environment
 * (`FLOOT_SPAWN_MARKER`, inherited by its children): a restart finds the CLI by it even when the daemon
 * died before the CLI's pid was journaled. Not a secret, but unguessable, so no other process carries it.
 */
export const SpawnMarker = lazySchema(() =>
  z.string().regex(/^[0-9a-f]{32}$/, "spawn marker must be 32 lowercase hex digits"),
);
export type SpawnMarker = z.infer<typeof SpawnMarker>;

/** Side effects that make a blind replay unsafe. */
export const TurnEffect = lazySchema(() => z.enum(["assistant_text", "tool_started"]));
export type TurnEffect = z.infer<typeof TurnEffect>;

/**
 * What a person decides for a turn whose CLI was gone while a tool call it started may have run
 * halfway (`may_have_run`): run that call again, go on without it, or leave the turn stopped.
 */
export const CliLostDecision = lazySchema(() => z.enum(["run_again", "skip", "stop"]));
export type CliLostDecision = z.infer<typeof CliLostDecision>;

/** The error code of a turn whose CLI was gone while a tool call may have run: it waits on a decision. */
export const mayHaveRunErrorCode = "may_have_run";

export const TurnRecord = lazySchema(() =>
  z.strictObject({
    id: JournalId,
    sessionId: JournalId,
    /** Position in the session, from 1, in submission order (queued turns run in seq order). */
    seq: z.number().int().positive(),
    backend: Backend,
    input: TurnInput,
    phase: TurnPhase,
    /** 1 + the automatic replays before this turn; an explicit retry starts again at 1. */
    attempt: z.number().int().positive(),
    replayOf: JournalId.optional(),
    retryOf: JournalId.optional(),
    /** The turn this one carries on, on the same conversation, after that turn's CLI was gone. */
    continues: JournalId.optional(),
    /** On a turn interrupted with `may_have_run`: what a person decided, once. */
    cliLostDecision: CliLostDecision.optional(),
    effects: z.array(TurnEffect),
    bridgeGeneration: NonNegativeInt,
    conversationId: z.string().min(1).optional(),
    spawnMarker: SpawnMarker.optional(),
    process: CliProcess.optional(),
    /**
     * A CLI run through the keeper: where the line after its last journaled one starts in its stdout
     * (journaled with that line's events); a daemon adopting the CLI reads on from there.
     */
    stdoutThrough: NonNegativeInt.optional(),
    error: TurnError.optional(),
    /** Number of committed events; the next event gets this index. */
    eventCount: NonNegativeInt,
    createdAt: IsoTimestamp,
    updatedAt: IsoTimestamp,
    endedAt: IsoTimestamp.optional(),
  }),
);
export type TurnRecord = z.infer<typeof TurnRecord>;

const Text = lazySchema(() => z.string());

// Events a backend adapter produces from its CLI's stream (BackendEvent).

export const BackendStartedEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("backend.started"),
    conversationId: z.string().min(1, "conversationId must not be empty"),
  }),
);
export type BackendStartedEvent = z.infer<typeof BackendStartedEvent>;

export const AssistantDeltaEvent = lazySchema(() =>
  z.strictObject({ type: z.literal("assistant.delta"), text: Text }),
);
export type AssistantDeltaEvent = z.infer<typeof AssistantDeltaEvent>;

export const AssistantTextEvent = lazySchema(() =>
  z.strictObject({ type: z.literal("assistant.text"), text: Text }),
);
export type AssistantTextEvent = z.infer<typeof AssistantTextEvent>;

export const ReasoningEvent = lazySchema(() => z.strictObject({ type: z.literal("reasoning"), text: Text }));
export type ReasoningEvent = z.infer<typeof ReasoningEvent>;

/**
 * Marks a tool the session declared effect-free (it only reads, e.g. Claude Code's `Read`): its start
 * proves no effect, so a turn that only read can still be replayed. Present only when true.
 */
const EffectFree = lazySchema(() => z.literal(true).optional());

export const ToolStartedEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("tool.started"),
    toolId: z.string().min(1, "toolId must not be empty"),
    name: z.string().min(1, "tool name must not be empty"),
    input: z.json(),
    effectFree: EffectFree,
  }),
);
export type ToolStartedEvent = z.infer<typeof ToolStartedEvent>;

export const ToolCompletedEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("tool.completed"),
    toolId: z.string().min(1, "toolId must not be empty"),
    output: z.json().optional(),
    isError: z.boolean(),
  }),
);
export type ToolCompletedEvent = z.infer<typeof ToolCompletedEvent>;

export const UsageEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("usage"),
    input: NonNegativeInt,
    output: NonNegativeInt,
    cacheRead: NonNegativeInt.optional(),
    cacheWrite: NonNegativeInt.optional(),
    costUsd: z.number().nonnegative().optional(),
    /** Tokens in the context at the turn's last model request: its input (cached or not) and output. */
    contextUsed: NonNegativeInt.optional(),
    /**
     * The model's context window where the CLI reports it: Claude Code 2.1.332's `result` line
     * (`modelUsage.<model>.contextWindow`); Codex 0.171's `turn.completed` has none.
     */
    contextWindow: NonNegativeInt.optional(),
  }),
);
export type UsageEvent = z.infer<typeof UsageEvent>;

export const WarningEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("warning"),
    code: z.string().min(1).optional(),
    message: z.string(),
  }),
);
export type WarningEvent = z.infer<typeof WarningEvent>;

export const ErrorEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("error"),
    code: z.string().min(1).optional(),
    message: z.string(),
  }),
);
export type ErrorEvent = z.infer<typeof ErrorEvent>;

export const BackendEvent = lazySchema(() =>
  z.discriminatedUnion("type", [
    BackendStartedEvent,
    AssistantDeltaEvent,
    AssistantTextEvent,
    ReasoningEvent,
    ToolStartedEvent,
    ToolCompletedEvent,
    UsageEvent,
    WarningEvent,
    ErrorEvent,
  ]),
);
export type BackendEvent = z.infer<typeof BackendEvent>;

// Events only the journal writes, in the same transaction as the state change they record (JournalEvent).

export const SecretRequestedEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("secret.requested"),
    requestId: JournalId,
    toolCallKey: z.string().min(1),
    name: z.string().min(1),
    prompt: z.string(),
  }),
);
export type SecretRequestedEvent = z.infer<typeof SecretRequestedEvent>;

export const SecretResolvedEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("secret.resolved"),
    requestId: JournalId,
    status: z.enum(["submitted", "cancelled", "expired", "orphaned"]),
    /** For `submitted`: who answered. */
    by: DecisionActor.optional(),
  }),
);
export type SecretResolvedEvent = z.infer<typeof SecretResolvedEvent>;

/** Claude Code asked the daemon's permission prompt tool whether a tool call may run. */
export const PermissionRequestedEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("permission.requested"),
    requestId: JournalId,
    toolName: z.string().min(1),
    /** The call as the human is shown it, whole (see `PermissionRequestDraft.inputSummary`). */
    inputSummary: z.string(),
    /** The session's rules in force when Claude Code asked: none of them matched the call. */
    unmatchedRules: z.array(z.string()),
    /**
     * A rule in Claude Code's syntax that "allow for this session" would add, e.g. `Bash(touch:*)`, or
     * for an interpreter the exact command; absent when no rule covers only this call.
     */
    suggestedRule: z.string().optional(),
  }),
);
export type PermissionRequestedEvent = z.infer<typeof PermissionRequestedEvent>;

/** A permission request was decided, closed, or its decision reached a call (`applied`). */
export const PermissionResolvedEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("permission.resolved"),
    requestId: JournalId,
    status: z.enum(["allowed", "denied", "cancelled", "expired", "orphaned", "applied"]),
    /** For `allowed` by a session rule: the rule added. */
    rule: z.string().optional(),
    /** For `denied`: what the model is told. */
    message: z.string().optional(),
    /** For `allowed` and `denied`: who decided. */
    by: DecisionActor.optional(),
  }),
);
export type PermissionResolvedEvent = z.infer<typeof PermissionResolvedEvent>;

/**
 * The pre-tool gate admitted a tool call: committed (synchronous=FULL) before the CLI's hook was
 * answered, so before the tool could run. `inputPreview` is the call's input as JSON text, cut to
 * `toolGateInputPreviewChars`.
 */
export const ToolAdmittedEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("tool.admitted"),
    toolId: z.string().min(1, "toolId must not be empty"),
    name: z.string().min(1, "tool name must not be empty"),
    inputPreview: z.string(),
    effectFree: EffectFree,
  }),
);
export type ToolAdmittedEvent = z.infer<typeof ToolAdmittedEvent>;

export const PhaseEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("phase"),
    phase: TurnPhase.exclude(["completed", "failed", "cancelled", "interrupted"]),
  }),
);
export type PhaseEvent = z.infer<typeof PhaseEvent>;

export const TerminalEvent = lazySchema(() =>
  z.strictObject({
    type: z.literal("terminal"),
    outcome: TerminalTurnPhase,
    error: TurnError.optional(),
    /** The automatic replay that carries on this turn's input, if any. */
    continuedBy: JournalId.optional(),
  }),
);
export type TerminalEvent = z.infer<typeof TerminalEvent>;

export const JournalEvent = lazySchema(() =>
  z.discriminatedUnion("type", [
    SecretRequestedEvent,
    SecretResolvedEvent,
    PermissionRequestedEvent,
    PermissionResolvedEvent,
    ToolAdmittedEvent,
    PhaseEvent,
    TerminalEvent,
  ]),
);
export type JournalEvent = z.infer<typeof JournalEvent>;

export const TurnEvent = lazySchema(() =>
  z.discriminatedUnion("type", [...BackendEvent.options, ...JournalEvent.options]),
);
export type TurnEvent = z.infer<typeof TurnEvent>;
export type TurnEventType = TurnEvent["type"];

export const TurnEventEnvelope = lazySchema(() =>
  z.strictObject({
    turnId: JournalId,
    /** Contiguous from 0 within a turn. */
    index: NonNegativeInt,
    at: IsoTimestamp,
    event: TurnEvent,
  }),
);
export type TurnEventEnvelope = z.infer<typeof TurnEventEnvelope>;

/**
 * A phase change a turn's owner asks for. The journal commits it with its `cause` event, the phase (or
 * terminal) event and any secret-request change in one transaction. `queued -> accepted` is a promotion,
 * `running <-> awaiting_secret` follows secret requests: neither is asked for here.
 */
export const TurnTransition = lazySchema(() =>
  z
    .strictObject({
      phase: TurnPhase.extract(["spawning", "running", "completed", "failed", "cancelled", "interrupted"]),
      /** The backend event that caused the change, e.g. the error before `failed`. */
      cause: BackendEvent.optional(),
      /** Recorded on `spawning`, before the spawn, so a restart can find the CLI before its pid is known. */
      spawnMarker: SpawnMarker.optional(),
      /** Recorded on `running`, before any output is read, so a restart can fence the process. */
      process: CliProcess.optional(),
      /** Known before spawn for Claude (`--session-id`); Codex reports it as `backend.started`. */
      conversationId: z.string().min(1, "conversationId must not be empty").optional(),
      error: TurnError.optional(),
    })
    .refine((change) => change.spawnMarker === undefined || change.phase === "spawning", {
      path: ["spawnMarker"],
      error: "spawnMarker is journaled with the spawning phase only",
    }),
);
export type TurnTransition = z.infer<typeof TurnTransition>;

const noEffects: readonly TurnEffect[] = [];

/**
 * Which effects each event type proves; the journal records them in the same transaction as the event.
 * A `tool.started` or `tool.admitted` marked `effectFree` proves none (see `effectsOfEvent`).
 */
export const turnEventEffects: Readonly<Record<TurnEventType, readonly TurnEffect[]>> = {
  "backend.started": noEffects,
  "assistant.delta": ["assistant_text"],
  "assistant.text": ["assistant_text"],
  reasoning: noEffects,
  // requestSecret is itself a tool call: a human has been asked, so a blind replay would ask again.
  "tool.started": ["tool_started"],
  // Committed before the tool may run: the effect is recorded before it can happen.
  "tool.admitted": ["tool_started"],
  "secret.requested": ["tool_started"],
  // A human has been asked: a blind replay would ask again, so only a decision and a retry carry on.
  "permission.requested": ["tool_started"],
  "tool.completed": noEffects,
  usage: noEffects,
  warning: noEffects,
  error: noEffects,
  "secret.resolved": noEffects,
  "permission.resolved": noEffects,
  phase: noEffects,
  terminal: noEffects,
};

/** The effects an event proves: its type's, none for a tool the session declared effect-free. */
export function effectsOfEvent(event: TurnEvent): readonly TurnEffect[] {
  if ("effectFree" in event && event.effectFree === true) return noEffects;
  return turnEventEffects[event.type];
}
