import { defineCommand, defineGroup } from "@bridgeworks/cli";
import {
  type DecidePermissionResponse,
  describeActor,
  type FlootPermissionRequestList,
  type FlootSessionRules,
  type PermissionRequest,
} from "@bridgeworks/protocol";
import type { FlootClient } from "../client/api-client.js";
import { digestShown } from "../shown-digest.js";
import type { FlootContext } from "./context.js";
import { connect, daemonOptions, pathId, show } from "./daemon-connection.js";

const command = defineCommand<FlootContext>();

/** The call as the daemon shows it, whole, every line indented (the daemon wrote what does not print). */
const indented = (shown: string) => shown.replace(/^/gm, "    ");

const describeRequest = (r: PermissionRequest) =>
  `${r.id}  ${r.status}  ${r.toolName}  (turn ${r.turnId}; ${
    r.decidedBy === undefined
      ? `session rule: ${r.suggestedRule ?? "none suggested"}`
      : `decided by ${describeActor(r.decidedBy)}`
  })\n${indented(r.inputSummary)}`;

/**
 * Reads the request, prints the whole call on stderr and returns the digest of what was printed: the
 * decision names it, so the daemon refuses it if the request shows anything else.
 */
async function showBeforeDeciding(
  client: FlootClient,
  context: FlootContext,
  requestId: string,
  verb: string,
): Promise<{ request: PermissionRequest; shownDigest: string }> {
  const request = await client.request<PermissionRequest>(
    "GET",
    `/v1/permission-requests/${pathId(requestId)}`,
  );
  context.stderr.write(
    `${verb} this ${request.toolName} call of turn ${request.turnId} (request ${request.id}):\n${indented(request.inputSummary)}\n`,
  );
  return { request, shownDigest: digestShown(request.inputSummary) };
}

const describeDecision = (answer: DecidePermissionResponse) => {
  const { request } = answer;
  const what = `${request.status} ${request.toolName}`;
  return answer.deliveredTo === "call"
    ? `${what} for the waiting call of turn ${request.turnId}`
    : `${what}; its turn had ended, retry turn ${answer.retryTurnId} carries the decision`;
};

const listCommand = command({
  name: "list",
  summary:
    "list the permission requests waiting for a decision (pending, or orphaned by a restart), each call whole",
  options: {
    all: { type: "boolean", summary: "the newest 200 requests whatever their status, with who decided each" },
    ...daemonOptions,
  },
  async run({ options }, context) {
    const list = await connect(context, options.state).request<FlootPermissionRequestList>(
      "GET",
      options.all ? "/v1/permission-requests?all" : "/v1/permission-requests",
    );
    show(context, options.json, list, () =>
      list.requests.length === 0 ? "no permission requests" : list.requests.map(describeRequest).join("\n"),
    );
  },
});

const allowCommand = command({
  name: "allow",
  summary:
    "print the whole call on stderr and let it run; with --session, also add a rule its later calls need not ask for",
  positionals: [{ name: "request", summary: "the request's id" }],
  options: {
    session: { type: "boolean", summary: "allow for this session: add a rule (default: the suggested one)" },
    rule: {
      type: "string",
      placeholder: "RULE",
      summary: "with --session, the rule in Claude Code's syntax, e.g. 'Bash(npm test:*)'",
    },
    ...daemonOptions,
  },
  examples: [
    { command: "floot approval allow 0191e0c4-…", summary: "allow this one call" },
    {
      command: "floot approval allow 0191e0c4-… --session --rule 'Bash(npm test:*)'",
      summary: "and its kind",
    },
  ],
  async run({ args, options }, context) {
    const client = connect(context, options.state);
    const { request, shownDigest } = await showBeforeDeciding(client, context, args.request, "allowing");
    const rule = options.session ? (options.rule ?? request.suggestedRule) : undefined;
    if (rule !== undefined) context.stderr.write(`and for this session, the rule ${rule}\n`);
    const body = {
      scope: options.session ? "session" : "once",
      ...(options.rule !== undefined && { rule: options.rule }),
      shownDigest,
    };
    const answer = await client.request<DecidePermissionResponse>(
      "POST",
      `/v1/permission-requests/${pathId(args.request)}/allow`,
      body,
    );
    show(context, options.json, answer, () => describeDecision(answer));
  },
});

const denyCommand = command({
  name: "deny",
  summary: "print the whole call on stderr and refuse it; the model reads the message in the tool result",
  positionals: [{ name: "request", summary: "the request's id" }],
  options: {
    message: { type: "string", placeholder: "M", summary: "what to tell the model" },
    ...daemonOptions,
  },
  async run({ args, options }, context) {
    const client = connect(context, options.state);
    const { shownDigest } = await showBeforeDeciding(client, context, args.request, "denying");
    const answer = await client.request<DecidePermissionResponse>(
      "POST",
      `/v1/permission-requests/${pathId(args.request)}/deny`,
      { ...(options.message !== undefined && { message: options.message }), shownDigest },
    );
    show(context, options.json, answer, () => describeDecision(answer));
  },
});

const rulesCommand = command({
  name: "rules",
  summary: "list the rules 'allow for this session' added to a session (passed to its later turns)",
  positionals: [{ name: "session", summary: "the session's id" }],
  options: {
    remove: { type: "string", placeholder: "RULE", summary: "remove this rule first" },
    ...daemonOptions,
  },
  async run({ args, options }, context) {
    const client = connect(context, options.state);
    const path = `/v1/sessions/${pathId(args.session)}/rules`;
    const list =
      options.remove !== undefined
        ? await client.request<FlootSessionRules>("POST", `${path}/remove`, { rule: options.remove })
        : await client.request<FlootSessionRules>("GET", path);
    const marked = (rule: string) =>
      list.runAnyCode.includes(rule) ? `${rule}  (lets the agent run any code)` : rule;
    show(context, options.json, list, () =>
      list.rules.length === 0 ? "no session rules" : list.rules.map(marked).join("\n"),
    );
  },
});

export const approvalGroup = defineGroup<FlootContext>(
  "approval",
  "tool calls Claude Code asked permission for, and the rules a session added",
  [listCommand, allowCommand, denyCommand, rulesCommand],
);
