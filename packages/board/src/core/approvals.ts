import {
  ActionId,
  ActionResult,
  ActionSender,
  type AgentIdentity,
  ApprovalDecision,
  ApprovalRequest,
  type DecidedAction,
  type DecideOutcome,
  HumanSender,
  type OpenAction,
  parseAgentIdentity,
} from "@bridgeworks/protocol";
import { parseArgument } from "../arguments.js";
import type { BoardApprovals } from "../board.js";
import { argumentError, BoardError } from "../errors.js";
import { actionFromRow } from "../rows.js";
import { approvalKind, insertAction } from "./actions.js";
import { requireAction, requireActive } from "./checks.js";
import type { CoreContext } from "./context.js";

/** The board's approvals area over `core`. */
export function approvalsArea(core: CoreContext): BoardApprovals {
  return {
    requestApproval: (request) => requestApproval(core, request),
    decide: (by, id, decision, reason) => decide(core, by, id, decision, reason),
  };
}

async function requestApproval(core: CoreContext, request: ApprovalRequest): Promise<OpenAction> {
  const { to, from, body, deciders } = parseArgument(ApprovalRequest, request, "request");
  if (to === "*") throw argumentError("to", "an approval is addressed to one person or one lead, not *");
  return insertAction(core, {
    kind: approvalKind,
    recipient: to,
    sender: from,
    body,
    deciders: [...new Set(deciders)],
  });
}

/**
 * Decides an open approval once. The compare-and-set checks that the approval is open and that its
 * deciders name `by` (a person through `human` or `human:<name>`, an agent by its name, while active).
 */
async function decide(
  core: CoreContext,
  by: string,
  id: ActionId,
  decision: string,
  reason?: string,
): Promise<DecideOutcome> {
  const decider = parseArgument(ActionSender, by, "by");
  const actionId = parseArgument(ActionId, id, "id");
  const verdict = parseArgument(ApprovalDecision, decision, "decision");
  const text = reason === undefined ? null : parseArgument(ActionResult, reason, "reason");
  const byHuman = HumanSender.safeParse(decider).success;
  const byName = byHuman ? decider : parseAgentIdentity(decider).name;
  const decided = await core.write((store) =>
    store.actions.decide({
      id: actionId,
      by: decider,
      byName,
      byHuman,
      decision: verdict,
      reason: text,
      now: core.deps.now(),
    }),
  );
  if (decided !== undefined) return { outcome: "decided", record: actionFromRow(decided) as DecidedAction };
  return core.read(async (store): Promise<DecideOutcome> => {
    const found = await store.lookup({ action: actionId, agent: byHuman ? undefined : decider });
    const row = requireAction(found, actionId);
    if (row.kind !== approvalKind) {
      throw new BoardError(
        "invalid_transition",
        `action ${actionId} is not an approval; only approvals are decided`,
      );
    }
    const record = actionFromRow(row);
    if (record.state === "decided") return { outcome: "already_decided", record };
    if (record.state !== "open") {
      throw new BoardError(
        "invalid_transition",
        `approval ${actionId} was withdrawn (${record.state}); nothing to decide`,
      );
    }
    if (!byHuman) requireActive(found, decider as AgentIdentity, "by");
    throw new BoardError(
      "not_permitted",
      `${decider} may not decide approval ${actionId}: its deciders are ${(record.deciders ?? []).join(", ")}`,
    );
  });
}
