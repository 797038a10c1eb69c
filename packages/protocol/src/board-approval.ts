import { z } from "zod";
import {
  ActionBody,
  ActionRecipient,
  ActionRecord,
  ActionSender,
  Cursor,
  DecidedAction,
  DeciderName,
} from "./board.js";
import { lazySchema } from "./lazy-schema.js";

// Approvals, waits on one action, the board's settings and the live view's page.

/** Most deciders an approval may name. */
export const maxDeciders = 16;

/**
 * A permission request put to the board: an action of kind `approval` addressed to `to` (a person,
 * `human:<name>`, or a lead agent by name), which only `deciders` may allow or deny.
 */
export const ApprovalRequest = lazySchema(() =>
  z.strictObject({
    to: ActionRecipient,
    from: ActionSender,
    body: ActionBody,
    deciders: z
      .array(DeciderName)
      .min(1, "must name at least one decider")
      .max(maxDeciders, `must name at most ${maxDeciders} deciders`),
  }),
);
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

/**
 * The result of a decision: `decided` by this call, or `already_decided` (the record says by whom
 * and how): an approval is decided exactly once.
 */
export const DecideOutcome = lazySchema(() =>
  z.discriminatedUnion("outcome", [
    z.strictObject({ outcome: z.literal("decided"), record: DecidedAction }),
    z.strictObject({ outcome: z.literal("already_decided"), record: DecidedAction }),
  ]),
);
export type DecideOutcome = z.infer<typeof DecideOutcome>;

/**
 * What a wait on one action waits for: `claimed` (held by a live claimer, or already past that) or
 * `completed` (closed: done, cancelled or decided).
 */
export const ActionWaitUntil = lazySchema(() => z.enum(["claimed", "completed"]));
export type ActionWaitUntil = z.infer<typeof ActionWaitUntil>;

/** Whether the action reached the state waited for, and the record as the board has it now. */
export const ActionWaitResult = lazySchema(() =>
  z.strictObject({
    reached: z.boolean(),
    record: ActionRecord,
  }),
);
export type ActionWaitResult = z.infer<typeof ActionWaitResult>;

export const minLeaseTtlMs = 100;
export const maxLeaseTtlMs = 86_400_000;
export const defaultLeaseTtlMs = 15_000;

/** Settings every process on one board shares, kept in the board itself. */
export const BoardSettings = lazySchema(() =>
  z.strictObject({
    /** How long a leased identity stays active after its last renewal. */
    leaseTtlMs: z.number().int().min(minLeaseTtlMs).max(maxLeaseTtlMs),
  }),
);
export type BoardSettings = z.infer<typeof BoardSettings>;

/**
 * One step of a live view: the records changed after the cursor, the cursor after them, and the
 * board's agents version (it moves whenever an identity is registered or ends).
 */
export const BoardChanges = lazySchema(() =>
  z.strictObject({
    records: z.array(ActionRecord),
    cursor: Cursor,
    agentsVersion: z.number().int().nonnegative(),
  }),
);
export type BoardChanges = z.infer<typeof BoardChanges>;
