import { ActionPage } from "@bridgeworks/protocol";
import { type McpToolResult, McpToolTable, mcpTool } from "@bridgeworks/runtime";
import type { z } from "zod";
import {
  ClaimInput,
  ClaimNextInput,
  CompleteInput,
  DecideInput,
  ListInput,
  PostInput,
  SessionEventToolInput,
  WaitActionInput,
  WaitForInput,
  WhoamiInput,
} from "./tool-arguments.js";
import type { CallContext } from "./wait-tools.js";

export const sessionEventToolName = "bee_session_event";

type Handler<Schema extends z.ZodType> = (
  input: z.output<Schema>,
  call: CallContext,
) => Promise<McpToolResult>;

/** What each of the bridge's tools runs, given its validated arguments. */
export interface BridgeToolHandlers {
  waitAction: Handler<typeof WaitActionInput>;
  list: Handler<typeof ListInput>;
  post: Handler<typeof PostInput>;
  waitFor: Handler<typeof WaitForInput>;
  claim: Handler<typeof ClaimInput>;
  claimNext: Handler<typeof ClaimNextInput>;
  complete: Handler<typeof CompleteInput>;
  decide: Handler<typeof DecideInput>;
  whoami: Handler<typeof WhoamiInput>;
  sessionEvent: Handler<typeof SessionEventToolInput>;
}

const meta = { "anthropic/alwaysLoad": true };

/** The bridge's tools: what the model reads about each, the schema that validates it, and its handler. */
export function bridgeToolTable(run: BridgeToolHandlers): McpToolTable<CallContext> {
  return new McpToolTable<CallContext>([
    mcpTool({
      name: "bee_wait_action",
      description:
        "Wait up to timeoutSeconds (1-60, default 45) for actions on the bee board that you can claim. " +
        "Returns {records, cursor}; pass cursor back on the next call. An empty page means nothing came: " +
        "call again with the returned cursor.",
      input: WaitActionInput,
      output: ActionPage,
      meta,
      handler: run.waitAction,
    }),
    mcpTool({
      name: "bee_list",
      description:
        "List board actions changed after a cursor (since and cursor are the same thing), oldest first, " +
        "with the cursor to page on.",
      input: ListInput,
      output: ActionPage,
      meta,
      handler: run.list,
    }),
    mcpTool({
      name: "bee_post",
      description:
        'Post an action to an agent by name, or to every agent with to: "*". The result is the action; ' +
        "its id is what bee_wait_for waits on.",
      input: PostInput,
      meta,
      handler: run.post,
    }),
    mcpTool({
      name: "bee_wait_for",
      description:
        "Wait up to timeoutSeconds (1-60, default 45) until an action is claimed by a live agent or " +
        "completed (until: claimed or completed, default completed). Returns {reached, record}: reached " +
        "false means not yet (call again) or never (the record says cancelled). A claim whose holder died " +
        "is released, never reported as claimed.",
      input: WaitForInput,
      meta,
      handler: run.waitFor,
    }),
    mcpTool({
      name: "bee_claim",
      description: "Claim an open action. outcome is claimed, or taken when someone else got it first.",
      input: ClaimInput,
      meta,
      handler: run.claim,
    }),
    mcpTool({
      name: "bee_claim_next",
      description:
        "Claim the oldest open action addressed to you or to everyone, in one step. outcome is claimed " +
        "with the record, or none when there is nothing to claim (wait with bee_wait_action, then call " +
        "again). It never loses a race to another agent.",
      input: ClaimNextInput,
      meta,
      handler: run.claimNext,
    }),
    mcpTool({
      name: "bee_complete",
      description:
        "Complete an action you claimed, with an optional result text. Refused (stale_fence) if your claim " +
        "lapsed and the action went back to the board.",
      input: CompleteInput,
      meta,
      handler: run.complete,
    }),
    mcpTool({
      name: "bee_decide",
      description:
        "Allow or deny an approval addressed to you (kind approval: another agent asks to use a tool). " +
        "Only a decider the approval names may decide; an approval is decided once.",
      input: DecideInput,
      meta,
      handler: run.decide,
    }),
    mcpTool({
      name: "bee_whoami",
      description: "Your identity on the bee board (agent:<name>#<8 hex>); it changes on /clear.",
      input: WhoamiInput,
      meta,
      handler: run.whoami,
    }),
    mcpTool({
      name: sessionEventToolName,
      description:
        "Internal: called by Claude Code's SessionStart mcp_tool hook on /clear. Not for the model.",
      input: SessionEventToolInput,
      meta,
      handler: run.sessionEvent,
    }),
  ]);
}
