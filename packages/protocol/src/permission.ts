import { z } from "zod";
import { DecisionActor } from "./confinement.js";
import { lazySchema } from "./lazy-schema.js";
import { JournalId } from "./turn.js";

// Permission requests: Claude Code's `--permission-prompt-tool` asks the daemon whether a tool call
// outside the session's rules may run; a human decides. The input is kept as the text a human is shown
// (whole, never cut) and a digest, so a retry's identical call finds the decision; a decision names the
// digest of the text it was made on.

const IsoTimestamp = lazySchema(() =>
  z.iso.datetime({ offset: true, error: "timestamp must be an ISO 8601 date-time" }),
);

/**
 * The most a request shows of a call, in UTF-8 bytes of its `inputSummary`: a call whose text is longer
 * is denied without asking anyone (the model is told the size), never shown cut.
 */
export const permissionInputShownBytes = 256 * 1024;

/** The longest rule: an exact Bash command as a rule is as long as the command (and its escapes). */
export const permissionRuleMaxChars = 16 * 1024;

const Sha256Hex = lazySchema(() => z.string().regex(/^[0-9a-f]{64}$/, "must be a SHA-256 hex digest"));

/**
 * A rule in Claude Code's own syntax: a tool name, optionally with a specifier in parentheses
 * (`Bash(npm test:*)`, `Edit(src/**)`, `mcp__server__tool`). Inside the specifier a parenthesis is
 * written `\(` or `\)` and a backslash `\\` (Claude Code's own escapes), so an exact command reads
 * `Bash(python3 -c "print\(6\\*7\)")`; an unescaped parenthesis inside is refused.
 */
export const PermissionRule = lazySchema(() =>
  z
    .string()
    .max(permissionRuleMaxChars, `a rule is at most ${permissionRuleMaxChars} characters`)
    .regex(
      /^[A-Za-z][A-Za-z0-9_-]*(\((?:[^()\\]|\\[\s\S])+\))?$/,
      "a rule is a tool name, optionally with a specifier in parentheses (a parenthesis inside written \\( or \\)), e.g. Bash(npm test:*)",
    ),
);
export type PermissionRule = z.infer<typeof PermissionRule>;

/**
 * `pending` waits for a human; `allowed` and `denied` are decisions (`appliedAt` once one reached a
 * call); `orphaned`: the turn that asked was interrupted by a restart, the request can still be decided
 * and the decision goes to the turn's retry; `cancelled` (the turn ended) and `expired` (the session's
 * timeout passed) are final.
 */
export const PermissionRequestStatus = lazySchema(() =>
  z.enum(["pending", "orphaned", "allowed", "denied", "cancelled", "expired"]),
);
export type PermissionRequestStatus = z.infer<typeof PermissionRequestStatus>;

/** What the permission prompt tool was asked. */
export const PermissionRequestDraft = lazySchema(() =>
  z.strictObject({
    /** Claude Code's tool_use id of the call in question; the same call asking again gets the same request. */
    toolCallKey: z.string().min(1).max(256),
    toolName: z.string().min(1).max(256),
    /**
     * The call as a human is shown it, whole: Bash's command, else the input as JSON; characters that
     * do not print are written `⟨U+XXXX⟩`. At most `permissionInputShownBytes` before masking (a mask
     * marker can be longer than what it replaces, hence the wider bound here).
     */
    inputSummary: z.string().max(4 * permissionInputShownBytes),
    /** SHA-256 (hex) of the call's input as JSON: a retry's identical call finds the decision by it. */
    inputDigest: Sha256Hex,
    unmatchedRules: z.array(z.string()).max(1000),
    /**
     * What "allow for this session" adds unless the human names another rule: never a prefix that lets
     * the agent run code the card did not show (an interpreter, a shell, a wrapper); the exact command
     * instead. Absent when no rule covers only this call (an exact command too long for a rule).
     */
    suggestedRule: PermissionRule.optional(),
  }),
);
export type PermissionRequestDraft = z.infer<typeof PermissionRequestDraft>;

export const PermissionDecision = lazySchema(() =>
  z.discriminatedUnion("behavior", [
    z.strictObject({
      behavior: z.literal("allow"),
      /** `session`: `rule` is added to the session's rules and passed to its later turns. */
      scope: z.enum(["once", "session"]),
      rule: PermissionRule.optional(),
    }),
    z.strictObject({
      behavior: z.literal("deny"),
      message: z.string().max(4000, "message must be at most 4000 characters").optional(),
    }),
  ]),
);
export type PermissionDecision = z.infer<typeof PermissionDecision>;

export const PermissionRequest = lazySchema(() =>
  z.strictObject({
    id: JournalId,
    turnId: JournalId,
    sessionId: JournalId,
    ...PermissionRequestDraft.shape,
    status: PermissionRequestStatus,
    decision: PermissionDecision.optional(),
    /** Who decided (with the decision). */
    decidedBy: DecisionActor.optional(),
    createdAt: IsoTimestamp,
    updatedAt: IsoTimestamp,
    decidedAt: IsoTimestamp.optional(),
    /** When the decision reached a call (the one that asked, or its retry's identical call). */
    appliedAt: IsoTimestamp.optional(),
    /**
     * While a call waits on a request of a session with a permission timeout: when the daemon denies it
     * (`expired`) unless someone decided. Not journaled: a restart orphans the request, which then waits.
     */
    expiresAt: IsoTimestamp.optional(),
  }),
);
export type PermissionRequest = z.infer<typeof PermissionRequest>;

/** `GET /v1/permission-requests`: pending and orphaned requests. */
export const FlootPermissionRequestList = lazySchema(() =>
  z.strictObject({ requests: z.array(PermissionRequest) }),
);
export type FlootPermissionRequestList = z.infer<typeof FlootPermissionRequestList>;

/** `POST /v1/permission-requests/:id/allow`. Without `rule`, a session scope adds the request's suggestion. */
export const AllowPermissionRequest = lazySchema(() =>
  z.strictObject({
    scope: z.enum(["once", "session"]).default("once"),
    rule: PermissionRule.optional(),
    /**
     * What the decision was made on: SHA-256 (hex) of the UTF-8 of the request's `inputSummary`, computed
     * by the client over the text it showed. The daemon refuses another digest (409 `digest_mismatch`):
     * a client that showed a cut, stale or other text never decides the call.
     */
    shownDigest: Sha256Hex,
  }),
);
export type AllowPermissionRequest = z.infer<typeof AllowPermissionRequest>;

/** `POST /v1/permission-requests/:id/deny`: the message reaches the model in the tool result. */
export const DenyPermissionRequest = lazySchema(() =>
  z.strictObject({
    message: z.string().max(4000, "message must be at most 4000 characters").optional(),
    /** As for allow: the digest of the text the decision was made on. */
    shownDigest: Sha256Hex,
  }),
);
export type DenyPermissionRequest = z.infer<typeof DenyPermissionRequest>;

export const DecidePermissionResponse = lazySchema(() =>
  z.strictObject({
    request: PermissionRequest,
    /** `call`: the waiting call got it; `retry`: the interrupted turn's retry will. */
    deliveredTo: z.enum(["call", "retry"]),
    retryTurnId: JournalId.optional(),
  }),
);
export type DecidePermissionResponse = z.infer<typeof DecidePermissionResponse>;

/**
 * `GET /v1/sessions/:id/rules`: the rules "allow for this session" added, passed to later turns, and
 * which of the session's rules (those it was created with too) let the agent run any code: Bash itself,
 * or a prefix or pattern that starts with an interpreter, a shell or a wrapper (`Bash(python3:*)`).
 */
export const FlootSessionRules = lazySchema(() =>
  z.strictObject({ rules: z.array(PermissionRule), runAnyCode: z.array(z.string()) }),
);
export type FlootSessionRules = z.infer<typeof FlootSessionRules>;

/** What Claude Code expects back from a permission prompt tool, as the JSON text of one text block. */
export const PermissionPromptAnswer = lazySchema(() =>
  z.discriminatedUnion("behavior", [
    z.strictObject({ behavior: z.literal("allow"), updatedInput: z.record(z.string(), z.unknown()) }),
    z.strictObject({ behavior: z.literal("deny"), message: z.string() }),
  ]),
);
export type PermissionPromptAnswer = z.infer<typeof PermissionPromptAnswer>;

/** `POST /v1/sessions/:id/rules/remove`: later turns no longer get the rule. */
export const RemoveSessionRuleRequest = lazySchema(() => z.strictObject({ rule: PermissionRule }));
export type RemoveSessionRuleRequest = z.infer<typeof RemoveSessionRuleRequest>;
