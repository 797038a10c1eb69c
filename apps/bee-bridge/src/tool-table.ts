import {
  actionPageJsonSchema,
  ClaimInput,
  ClaimNextInput,
  CompleteInput,
  DecideInput,
  ListInput,
  PostInput,
  SessionEventToolInput,
  toolInputJsonSchema,
  WaitActionInput,
  WaitForInput,
  WhoamiInput,
} from "./tool-arguments.js";

export const sessionEventToolName = "bee_session_event";

export interface ToolDescription {
  name: string;
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  outputSchema?: { type: "object"; [key: string]: unknown };
  _meta: Record<string, unknown>;
}

const alwaysLoad = { "anthropic/alwaysLoad": true };

/** The bridge's tools as `tools/list` shows them: what the model reads about each. */
export function describeTools(): ToolDescription[] {
  const pageSchema = actionPageJsonSchema();
  return [
    {
      name: "bee_wait_action",
      description:
        "Wait up to timeoutSeconds (1-60, default 45) for actions on the bee board that you can claim. " +
        "Returns {records, cursor}; pass cursor back on the next call. An empty page means nothing came: " +
        "call again with the returned cursor.",
      inputSchema: toolInputJsonSchema(WaitActionInput),
      outputSchema: pageSchema,
      _meta: alwaysLoad,
    },
    {
      name: "bee_list",
      description:
        "List board actions changed after a cursor (since and cursor are the same thing), oldest first, " +
        "with the cursor to page on.",
      inputSchema: toolInputJsonSchema(ListInput),
      outputSchema: pageSchema,
      _meta: alwaysLoad,
    },
    {
      name: "bee_post",
      description:
        'Post an action to an agent by name, or to every agent with to: "*". The result is the action; ' +
        "its id is what bee_wait_for waits on.",
      inputSchema: toolInputJsonSchema(PostInput),
      _meta: alwaysLoad,
    },
    {
      name: "bee_wait_for",
      description:
        "Wait up to timeoutSeconds (1-60, default 45) until an action is claimed by a live agent or " +
        "completed (until: claimed or completed, default completed). Returns {reached, record}: reached " +
        "false means not yet (call again) or never (the record says cancelled). A claim whose holder died " +
        "is released, never reported as claimed.",
      inputSchema: toolInputJsonSchema(WaitForInput),
      _meta: alwaysLoad,
    },
    {
      name: "bee_claim",
      description: "Claim an open action. outcome is claimed, or taken when someone else got it first.",
      inputSchema: toolInputJsonSchema(ClaimInput),
      _meta: alwaysLoad,
    },
    {
      name: "bee_claim_next",
      description:
        "Claim the oldest open action addressed to you or to everyone, in one step. outcome is claimed " +
        "with the record, or none when there is nothing to claim (wait with bee_wait_action, then call " +
        "again). It never loses a race to another agent.",
      inputSchema: toolInputJsonSchema(ClaimNextInput),
      _meta: alwaysLoad,
    },
    {
      name: "bee_complete",
      description:
        "Complete an action you claimed, with an optional result text. Refused (stale_fence) if your claim " +
        "lapsed and the action went back to the board.",
      inputSchema: toolInputJsonSchema(CompleteInput),
      _meta: alwaysLoad,
    },
    {
      name: "bee_decide",
      description:
        "Allow or deny an approval addressed to you (kind approval: another agent asks to use a tool). " +
        "Only a decider the approval names may decide; an approval is decided once.",
      inputSchema: toolInputJsonSchema(DecideInput),
      _meta: alwaysLoad,
    },
    {
      name: "bee_whoami",
      description: "Your identity on the bee board (agent:<name>#<8 hex>); it changes on /clear.",
      inputSchema: toolInputJsonSchema(WhoamiInput),
      _meta: alwaysLoad,
    },
    {
      name: sessionEventToolName,
      description:
        "Internal: called by Claude Code's SessionStart mcp_tool hook on /clear. Not for the model.",
      inputSchema: toolInputJsonSchema(SessionEventToolInput),
      _meta: alwaysLoad,
    },
  ];
}
