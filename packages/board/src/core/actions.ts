import {
  ActionDraft,
  ActionId,
  type ActionPage,
  type ActionRecord,
  ActionResult,
  ActionSender,
  AgentIdentity,
  type CancelledAction,
  type ClaimedAction,
  type ClaimNextOutcome,
  type ClaimOutcome,
  type CompleteOutcome,
  type DoneAction,
  FencingToken,
  type OpenAction,
  parseAgentIdentity,
} from "@bridgeworks/protocol";
import { parseArgument, parseIntegerArgument } from "../arguments.js";
import type { BoardActions, CompleteOptions, ListOptions } from "../board.js";
import { argumentError, BoardError } from "../errors.js";
import { actionFromRow } from "../rows.js";
import { describeSender, listLimit, mintAttempts, requireObject } from "../rules.js";
import type { NewAction } from "../store.js";
import { actionNotFound, leaseLapsed, requireAction, requireActive } from "./checks.js";
import type { CoreContext } from "./context.js";

/** The board's actions area over `core`. */
export function actionsArea(core: CoreContext): BoardActions {
  return {
    post: (draft) => post(core, draft),
    get: (id) => get(core, id),
    list: (options) => list(core, options),
    claim: (agent, id) => claim(core, agent, id),
    claimNext: (agent) => claimNext(core, agent),
    complete: (agent, id, result, options) => complete(core, agent, id, result, options),
    cancel: (by, id, reason) => cancel(core, by, id, reason),
  };
}

/** The kind only `requestApproval` posts; approvals are decided, never claimed. */
export const approvalKind = "approval";

/** Inserts a fresh action, minting its id again on a clash. */
export async function insertAction(
  core: CoreContext,
  fields: Omit<NewAction, "id" | "now" | "senderAgent">,
): Promise<OpenAction> {
  const sender = describeSender(fields.sender);
  for (let attempt = 1; ; attempt++) {
    const id = `act_${Buffer.from(core.deps.randomBytes(8)).toString("hex")}`;
    const inserted = await core.write((store) =>
      store.actions.insert({ ...fields, id, senderAgent: sender.agent, now: core.deps.now() }),
    );
    if (inserted !== undefined) return actionFromRow(inserted) as OpenAction;
    // The insert checks an agent sender itself; a sender that is active now was active then, so
    // the miss was a clash of random ids: mint again.
    if (sender.agent !== null) {
      await core.read(async (store) =>
        requireActive(await store.lookup({ agent: fields.sender }), fields.sender as AgentIdentity, "from"),
      );
    }
    if (attempt >= mintAttempts)
      throw new Error(`could not mint a fresh action id in ${mintAttempts} attempts`);
  }
}

async function post(core: CoreContext, draft: ActionDraft): Promise<OpenAction> {
  const { kind, to, from, body } = parseArgument(ActionDraft, draft, "draft");
  if (kind === approvalKind) throw argumentError("kind", "approval is reserved: ask with requestApproval");
  return insertAction(core, { kind, recipient: to, sender: from, body, deciders: null });
}

async function get(core: CoreContext, id: ActionId): Promise<ActionRecord> {
  const actionId = parseArgument(ActionId, id, "id");
  return core.read(async (store) => {
    const row = await store.actions.get(actionId);
    if (row === undefined) throw actionNotFound(actionId);
    return actionFromRow(row);
  });
}

async function list(core: CoreContext, options: ListOptions = {}): Promise<ActionPage> {
  requireObject(options, "options");
  const limit = parseIntegerArgument(options.limit ?? listLimit.default, "limit", 1, listLimit.max);
  return core.read(async (store) => {
    const start = core.position(options.cursor);
    const { rows, head } = await store.actions.changedAfter(start, limit);
    core.requireWithin(start, head);
    const position = rows.at(-1)?.seq ?? start;
    return { records: rows.map(actionFromRow), cursor: core.cursorAt(position) };
  });
}

async function claim(core: CoreContext, agent: AgentIdentity, id: ActionId): Promise<ClaimOutcome> {
  const identity = parseArgument(AgentIdentity, agent, "agent");
  const actionId = parseArgument(ActionId, id, "id");
  const { name } = parseAgentIdentity(identity);
  // The compare-and-set decides; the read after a miss only explains it. A miss on an action that
  // reads as claimable again (released meanwhile) tries the compare-and-set once more.
  for (let attempt = 0; ; attempt++) {
    const claimed = await core.write((store) =>
      store.actions.claim(actionId, identity, name, core.deps.now()),
    );
    if (claimed !== undefined) return { outcome: "claimed", record: actionFromRow(claimed) as ClaimedAction };
    const outcome = await core.read(async (store): Promise<ClaimOutcome | "retry"> => {
      const found = await store.lookup({ action: actionId, agent: identity });
      requireActive(found, identity, "agent");
      const row = requireAction(found, actionId);
      if (row.kind === approvalKind) {
        throw new BoardError(
          "not_permitted",
          `action ${actionId} is an approval: it is decided (allowed or denied), never claimed`,
        );
      }
      if (row.recipient !== name && row.recipient !== "*") {
        throw new BoardError(
          "not_addressed",
          `action ${actionId} is addressed to ${row.recipient}, not ${name}`,
        );
      }
      const record = actionFromRow(row);
      if (record.state === "claimed" && record.claimedBy === identity) return { outcome: "claimed", record };
      if (record.state === "open") return "retry";
      return { outcome: "taken", record };
    });
    if (outcome !== "retry") return outcome;
    if (attempt >= 3)
      throw new BoardError("busy", `action ${actionId} kept changing during the claim; retry`);
  }
}

async function claimNext(core: CoreContext, agent: AgentIdentity): Promise<ClaimNextOutcome> {
  const identity = parseArgument(AgentIdentity, agent, "agent");
  const { name } = parseAgentIdentity(identity);
  const claimed = await core.write((store) => store.actions.claimNext(identity, name, core.deps.now()));
  if (claimed !== undefined) return { outcome: "claimed", record: actionFromRow(claimed) as ClaimedAction };
  // Nothing was claimable, or the caller may not claim at all; the read tells which.
  await core.read(async (store) => requireActive(await store.lookup({ agent: identity }), identity, "agent"));
  return { outcome: "none" };
}

async function complete(
  core: CoreContext,
  agent: AgentIdentity,
  id: ActionId,
  result: string | undefined,
  options: CompleteOptions = {},
): Promise<CompleteOutcome> {
  const identity = parseArgument(AgentIdentity, agent, "agent");
  const actionId = parseArgument(ActionId, id, "id");
  const text = result === undefined ? null : parseArgument(ActionResult, result, "result");
  requireObject(options, "options");
  const fence = options.fence === undefined ? null : parseArgument(FencingToken, options.fence, "fence");
  const completed = await core.write((store) =>
    store.actions.complete({ id: actionId, agent: identity, result: text, fence, now: core.deps.now() }),
  );
  if (completed !== undefined)
    return { outcome: "completed", record: actionFromRow(completed) as DoneAction };
  return core.read(async (store): Promise<CompleteOutcome> => {
    const found = await store.lookup({ action: actionId, agent: identity });
    const record = actionFromRow(requireAction(found, actionId));
    const heldByCaller =
      "claimedBy" in record && record.claimedBy === identity && (fence === null || record.fence === fence);
    if (record.state === "done" && heldByCaller) return { outcome: "completed", record };
    if (record.state === "cancelled" && heldByCaller) return { outcome: "cancelled", record };
    const caller = found.agent;
    if (caller === undefined) {
      throw new BoardError("agent_not_found", `agent: ${identity} is not registered on this board`, {
        argument: "agent",
      });
    }
    const callerEnded = caller.status !== "active" || leaseLapsed(found);
    const claimedBefore = requireAction(found, actionId).fence > 0;
    if ((callerEnded && claimedBefore) || (fence !== null && "claimedBy" in record)) {
      throw staleFence(actionId, identity, fence, record, callerEnded);
    }
    requireActive(found, identity, "agent");
    if (record.state === "open") {
      throw new BoardError("invalid_transition", `action ${actionId} is open; claim it before completing it`);
    }
    const holder = "claimedBy" in record && record.claimedBy !== undefined ? record.claimedBy : "nobody";
    throw new BoardError(
      "not_claimer",
      `action ${actionId} is ${record.state} and held by ${holder}; only its claimer completes it`,
    );
  });
}

/** An old holder's late write: its lease lapsed (or it ended), or the action was claimed again since. */
function staleFence(
  id: string,
  identity: string,
  fence: number | null,
  record: ActionRecord,
  callerEnded: boolean,
): BoardError {
  const now =
    record.state === "claimed"
      ? `claimed by ${record.claimedBy} under fence ${record.fence}`
      : `${record.state}`;
  const why = callerEnded
    ? `${identity} no longer holds a lease on this board`
    : `fence ${fence} is not the current claim's`;
  return new BoardError(
    "stale_fence",
    `action ${id}: ${why}; the action is now ${now}; the result was not recorded`,
  );
}

async function cancel(
  core: CoreContext,
  by: string,
  id: ActionId,
  reason?: string,
): Promise<CancelledAction> {
  const canceller = parseArgument(ActionSender, by, "by");
  const actionId = parseArgument(ActionId, id, "id");
  const text = reason === undefined ? null : parseArgument(ActionResult, reason, "reason");
  const sender = describeSender(canceller);
  const cancelled = await core.write((store) =>
    store.actions.cancel({
      id: actionId,
      by: canceller,
      byAgent: sender.agent,
      reason: text,
      now: core.deps.now(),
    }),
  );
  if (cancelled !== undefined) return actionFromRow(cancelled) as CancelledAction;
  return core.read(async (store) => {
    const byAgent = sender.agent === null ? undefined : canceller;
    const found = await store.lookup({ action: actionId, agent: byAgent });
    if (byAgent !== undefined) requireActive(found, byAgent as AgentIdentity, "by");
    const row = requireAction(found, actionId);
    if (row.state === "done" || row.state === "cancelled" || row.state === "decided") {
      throw new BoardError("invalid_transition", `action ${actionId} is already ${row.state}`);
    }
    throw new BoardError(
      "not_permitted",
      `action ${actionId} was posted by ${row.sender}; only its poster or a human cancels it`,
    );
  });
}
