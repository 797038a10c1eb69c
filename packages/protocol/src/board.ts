import { z } from "zod";
import { AgentIdentity, AgentName } from "./identity.js";
import { lazySchema } from "./lazy-schema.js";

/** A stable action id, minted by the board from random bytes: `act_<16 lowercase hex>`. */
export const ActionId = lazySchema(() =>
  z
    .string()
    .regex(/^act_[0-9a-f]{16}$/, "must look like act_<16 lowercase hex>")
    .brand<"ActionId">(),
);
export type ActionId = z.infer<typeof ActionId>;

/** `decided`: an approval a decider allowed or denied (approvals are decided, never claimed). */
export const ActionState = lazySchema(() => z.enum(["open", "claimed", "done", "cancelled", "decided"]));
export type ActionState = z.infer<typeof ActionState>;

/** What an action asks for, e.g. `review` or `deploy.request`; agents decide what a kind means. */
export const ActionKind = lazySchema(() =>
  z
    .string()
    .min(1, "must not be empty")
    .max(64, "must be at most 64 characters")
    .regex(/^[A-Za-z0-9._:/-]+$/, "may hold only letters, digits, '.', '_', ':', '/' and '-'"),
);
export type ActionKind = z.infer<typeof ActionKind>;

/**
 * Who may claim an action: one agent by name (any of its identities), or `*` for every agent. An
 * approval may also be addressed to a person, `human:<name>`, whom no agent's name can match.
 */
export const ActionRecipient = lazySchema(() =>
  z
    .string()
    .refine(
      (value) =>
        value === "*" || AgentName.safeParse(value).success || /^human:[A-Za-z0-9._-]{1,64}$/.test(value),
      "must be an agent name, * or human:<name>",
    ),
);
export type ActionRecipient = z.infer<typeof ActionRecipient>;

/**
 * A person posting from outside any agent session (the board CLI, the web UI): `human`, or
 * `human:<name>` when the person is known. Humans are not registered on the board.
 */
export const HumanSender = lazySchema(() =>
  z.string().regex(/^human(:[A-Za-z0-9._-]{1,64})?$/, "must be human or human:<name>"),
);
export type HumanSender = z.infer<typeof HumanSender>;

/** Who posted an action: an agent's identity (`agent:<name>#<8 hex>`) or a human sender. */
export const ActionSender = lazySchema(() =>
  z.union([AgentIdentity, HumanSender], {
    error: "must be an agent identity (agent:<name>#<8 hex>) or a human sender (human or human:<name>)",
  }),
);
export type ActionSender = z.infer<typeof ActionSender>;

const maxTextLength = 32_768;

export const ActionBody = lazySchema(() =>
  z.string().max(maxTextLength, `must be at most ${maxTextLength} characters`),
);
export type ActionBody = z.infer<typeof ActionBody>;

/** The claimer's result when an action is done; the canceller's reason when it is cancelled. */
export const ActionResult = lazySchema(() =>
  z.string().max(maxTextLength, `must be at most ${maxTextLength} characters`),
);
export type ActionResult = z.infer<typeof ActionResult>;

/** An ISO 8601 instant in UTC, e.g. `2026-11-06T10:15:00.000Z`. */
export const Timestamp = lazySchema(() =>
  z.iso.datetime({ precision: 3, error: "must be an ISO 8601 UTC timestamp" }),
);
export type Timestamp = z.infer<typeof Timestamp>;

/** What a poster hands to the board; the board adds id, seq, state and timestamps. */
export const ActionDraft = lazySchema(() =>
  z.strictObject({
    kind: ActionKind,
    to: ActionRecipient,
    from: ActionSender,
    body: ActionBody,
  }),
);
export type ActionDraft = z.infer<typeof ActionDraft>;

/**
 * Who may decide an approval: `human` (any person), `human:<name>` (that person) or an agent's
 * name (any active identity of it).
 */
export const DeciderName = lazySchema(() =>
  z
    .string()
    .refine(
      (value) => HumanSender.safeParse(value).success || AgentName.safeParse(value).success,
      "must be human, human:<name> or an agent name",
    ),
);
export type DeciderName = z.infer<typeof DeciderName>;

/** The claim a holder acts under: each claim of an action takes the next number, 1 for the first. */
export const FencingToken = lazySchema(() => z.number().int().positive());

const actionBase = {
  id: ActionId,
  /** The board position of this record's latest change; every change moves a record to the end. */
  seq: z.number().int().positive(),
  kind: ActionKind,
  to: ActionRecipient,
  from: ActionSender,
  body: ActionBody,
  createdAt: Timestamp,
  /** Present on approvals only: who may decide it. */
  deciders: z.array(DeciderName).optional(),
};

export const OpenAction = lazySchema(() => z.strictObject({ ...actionBase, state: z.literal("open") }));
export type OpenAction = z.infer<typeof OpenAction>;

export const ClaimedAction = lazySchema(() =>
  z.strictObject({
    ...actionBase,
    state: z.literal("claimed"),
    claimedBy: AgentIdentity,
    claimedAt: Timestamp,
    fence: FencingToken,
  }),
);
export type ClaimedAction = z.infer<typeof ClaimedAction>;

export const DoneAction = lazySchema(() =>
  z.strictObject({
    ...actionBase,
    state: z.literal("done"),
    claimedBy: AgentIdentity,
    claimedAt: Timestamp,
    fence: FencingToken,
    result: ActionResult.optional(),
    closedAt: Timestamp,
  }),
);
export type DoneAction = z.infer<typeof DoneAction>;

/** A cancelled action keeps `claimedBy` when it was held at the time. */
export const CancelledAction = lazySchema(() =>
  z.strictObject({
    ...actionBase,
    state: z.literal("cancelled"),
    claimedBy: AgentIdentity.optional(),
    claimedAt: Timestamp.optional(),
    fence: FencingToken.optional(),
    cancelledBy: ActionSender,
    result: ActionResult.optional(),
    closedAt: Timestamp,
  }),
);
export type CancelledAction = z.infer<typeof CancelledAction>;

export const ApprovalDecision = lazySchema(() => z.enum(["allow", "deny"]));
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

/** An approval a decider allowed or denied; `result` holds the decider's reason, when given. */
export const DecidedAction = lazySchema(() =>
  z.strictObject({
    ...actionBase,
    state: z.literal("decided"),
    decision: ApprovalDecision,
    decidedBy: ActionSender,
    result: ActionResult.optional(),
    closedAt: Timestamp,
  }),
);
export type DecidedAction = z.infer<typeof DecidedAction>;

/** One action on the board; which fields are present follows from `state`. */
export const ActionRecord = lazySchema(() =>
  z.discriminatedUnion("state", [OpenAction, ClaimedAction, DoneAction, CancelledAction, DecidedAction]),
);
export type ActionRecord = z.infer<typeof ActionRecord>;

/**
 * A position on the board, minted only by the board and carried by the client unchanged.
 * Its content is the board's business; clients get one from an `ActionPage` and never build one.
 */
export const Cursor = lazySchema(() =>
  z
    .string()
    .min(1, "must not be empty")
    .max(512, "must be at most 512 characters")
    .regex(/^[A-Za-z0-9_-]+$/, "must be a cursor the board returned")
    .brand<"Cursor">(),
);
export type Cursor = z.infer<typeof Cursor>;

/** Records in board order and the cursor to resume after them. */
export const ActionPage = lazySchema(() =>
  z.strictObject({
    records: z.array(ActionRecord),
    cursor: Cursor,
  }),
);
export type ActionPage = z.infer<typeof ActionPage>;

/**
 * The result of a claim. `taken` is the lost race: another identity holds the action, or it is
 * already done or cancelled. Claiming an action the caller already holds answers `claimed` again.
 */
export const ClaimOutcome = lazySchema(() =>
  z.discriminatedUnion("outcome", [
    z.strictObject({ outcome: z.literal("claimed"), record: ClaimedAction }),
    z.strictObject({ outcome: z.literal("taken"), record: ActionRecord }),
  ]),
);
export type ClaimOutcome = z.infer<typeof ClaimOutcome>;

/**
 * The result of claiming the next claimable action: `claimed` with the oldest open action addressed
 * to the caller's name or `*` (by board position), or `none` when there was nothing to claim. Never
 * `taken`: the claim picks only what it can win.
 */
export const ClaimNextOutcome = lazySchema(() =>
  z.discriminatedUnion("outcome", [
    z.strictObject({ outcome: z.literal("claimed"), record: ClaimedAction }),
    z.strictObject({ outcome: z.literal("none") }),
  ]),
);
export type ClaimNextOutcome = z.infer<typeof ClaimNextOutcome>;

/**
 * The result of a complete by the claimer. `cancelled` means the action was cancelled while the
 * caller held it, and the result was not recorded. Completing again answers `completed` with the
 * record as first completed.
 */
export const CompleteOutcome = lazySchema(() =>
  z.discriminatedUnion("outcome", [
    z.strictObject({ outcome: z.literal("completed"), record: DoneAction }),
    z.strictObject({ outcome: z.literal("cancelled"), record: CancelledAction }),
  ]),
);
export type CompleteOutcome = z.infer<typeof CompleteOutcome>;

/**
 * `retired`: replaced by a successor after a `/clear`; `departed`: its bridge left the board;
 * `expired`: its lease lapsed (the process holding it died or lost the board) and its claims were released.
 */
export const AgentStatus = lazySchema(() => z.enum(["active", "retired", "departed", "expired"]));
export type AgentStatus = z.infer<typeof AgentStatus>;

/** The process an identity belongs to, as it told the board when it registered. */
export const AgentProcess = lazySchema(() =>
  z.strictObject({
    host: z.string().min(1).max(255),
    pid: z.number().int().positive(),
  }),
);
export type AgentProcess = z.infer<typeof AgentProcess>;

const agentBase = {
  identity: AgentIdentity,
  name: AgentName,
  registeredAt: Timestamp,
  process: AgentProcess.optional(),
};

/**
 * `leaseExpiresAt` (the board's clock): a leased identity stays active only while its process renews
 * the lease; an identity without one (a person's, through the CLI) holds until it ends.
 */
export const ActiveAgent = lazySchema(() =>
  z.strictObject({ ...agentBase, status: z.literal("active"), leaseExpiresAt: Timestamp.optional() }),
);
export const RetiredAgent = lazySchema(() =>
  z.strictObject({
    ...agentBase,
    status: z.literal("retired"),
    endedAt: Timestamp,
    successor: AgentIdentity,
  }),
);
export const DepartedAgent = lazySchema(() =>
  z.strictObject({
    ...agentBase,
    status: z.literal("departed"),
    endedAt: Timestamp,
  }),
);

export const ExpiredAgent = lazySchema(() =>
  z.strictObject({
    ...agentBase,
    status: z.literal("expired"),
    endedAt: Timestamp,
  }),
);

export const AgentRecord = lazySchema(() =>
  z.discriminatedUnion("status", [ActiveAgent, RetiredAgent, DepartedAgent, ExpiredAgent]),
);
export type AgentRecord = z.infer<typeof AgentRecord>;
export type ActiveAgent = z.infer<typeof ActiveAgent>;
export type RetiredAgent = z.infer<typeof RetiredAgent>;
export type DepartedAgent = z.infer<typeof DepartedAgent>;
export type ExpiredAgent = z.infer<typeof ExpiredAgent>;

/** A retire: the successor was registered first, then the old identity retired and its claims released. */
export const Retirement = lazySchema(() =>
  z.strictObject({
    retired: RetiredAgent,
    current: ActiveAgent,
    released: z.array(ActionId),
  }),
);
export type Retirement = z.infer<typeof Retirement>;

/** A depart: the identity left the board; `released` lists its claims returned to open. */
export const Departure = lazySchema(() =>
  z.strictObject({
    agent: z.discriminatedUnion("status", [RetiredAgent, DepartedAgent, ExpiredAgent]),
    released: z.array(ActionId),
  }),
);
export type Departure = z.infer<typeof Departure>;

/** Why a board operation was refused; `busy` alone is worth retrying unchanged. */
export const BoardErrorCode = lazySchema(() =>
  z.enum([
    "invalid_argument",
    "action_not_found",
    "agent_not_found",
    "agent_not_active",
    "not_addressed",
    "not_claimer",
    "not_permitted",
    "invalid_transition",
    "stale_fence",
    "retire_incomplete",
    "busy",
    "closed",
    "incompatible_store",
  ]),
);
export type BoardErrorCode = z.infer<typeof BoardErrorCode>;

/** A refusal as it crosses a process boundary; `argument` names the offending argument. */
export const BoardErrorPayload = lazySchema(() =>
  z.strictObject({
    code: BoardErrorCode,
    message: z.string(),
    argument: z.string().optional(),
    retryable: z.boolean(),
    /** The write may or may not have been made: read the board before repeating a post or a claimNext. */
    unsure: z.literal(true).optional(),
  }),
);
export type BoardErrorPayload = z.infer<typeof BoardErrorPayload>;
