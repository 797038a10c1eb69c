import {
  ActionBody,
  ActionId,
  ActionKind,
  ActionRecipient,
  ActionResult,
  ActionWaitUntil,
  ApprovalDecision,
  Cursor,
  SessionEventToolInput,
} from "@bridgeworks/protocol";
import { z } from "zod";

export const defaultWaitSeconds = 45;
export const maxWaitSeconds = 60;
export const defaultPostKind = "task";

// The wire contract of the bridge's MCP tools. Record shapes come from @bridgeworks/protocol.
export const WaitActionInput = z.strictObject({
  timeoutSeconds: z.int().min(1).max(maxWaitSeconds).default(defaultWaitSeconds),
  cursor: Cursor.optional(),
});
export const ListInput = z.strictObject({
  since: Cursor.optional(),
  cursor: Cursor.optional(),
  limit: z.int().min(1).max(500).optional(),
});
export const PostInput = z.strictObject({
  to: ActionRecipient,
  kind: ActionKind.default(defaultPostKind),
  body: ActionBody,
});
export const ClaimInput = z.strictObject({ actionId: ActionId });
export const ClaimNextInput = z.strictObject({});
export const CompleteInput = z.strictObject({ actionId: ActionId, result: ActionResult.optional() });
export const WhoamiInput = z.strictObject({});
export const WaitForInput = z.strictObject({
  actionId: ActionId,
  until: ActionWaitUntil.default("completed"),
  timeoutSeconds: z.int().min(1).max(maxWaitSeconds).default(defaultWaitSeconds),
});
export const DecideInput = z.strictObject({
  actionId: ActionId,
  decision: ApprovalDecision,
  reason: ActionResult.optional(),
});
export { SessionEventToolInput };
