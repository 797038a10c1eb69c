import { defineCommand, defineGroup } from "@bridgeworks/cli";
import {
  type DecidePermissionResponse,
  describeActor,
  type FlootPermissionRequestList,
  type FlootSessionRules,
  type PermissionRequest,
} from "@bridgeworks/protocol";
import type { FlootContext } from "./context.js";
import { connect, daemonOptions, pathId, show } from "./daemon-connection.js";

const command = defineCommand<FlootContext>();

const describeRequest = (r: PermissionRequest) =>
  `${r.id}  ${r.status}  ${r.toolName}  ${r.inputSummary.split("\n")[0]}  (turn ${r.turnId}; ${
    r.decidedBy === undefined
      ? `session rule: ${r.suggestedRule}`
      : `decided by ${describeActor(r.decidedBy)}`
  })`;

const describeDecision = (answer: DecidePermissionResponse) => {
  const { request } = answer;
  const what = `${request.status} ${request.toolName}`;
  return answer.deliveredTo === "call"
    ? `${what} for the waiting call of turn ${request.turnId}`
    : `${what}; its turn had ended, retry turn ${answer.retryTurnId} carries the decision`;
};

const listCommand = command({
  name: "list",
  summary: "list the permission requests waiting for a decision (pending, or orphaned by a restart)",
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
  summary: "let the call run; with --session, also add a rule the session's later calls need not ask for",
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
    const body = {
      scope: options.session ? "session" : "once",
      ...(options.rule !== undefined && { rule: options.rule }),
    };
    const answer = await connect(context, options.state).request<DecidePermissionResponse>(
      "POST",
      `/v1/permission-requests/${pathId(args.request)}/allow`,
      body,
    );
    show(context, options.json, answer, () => describeDecision(answer));
  },
});

const denyCommand = command({
  name: "deny",
  summary: "refuse the call; the model reads the message in the tool result",
  positionals: [{ name: "request", summary: "the request's id" }],
  options: {
    message: { type: "string", placeholder: "M", summary: "what to tell the model" },
    ...daemonOptions,
  },
  async run({ args, options }, context) {
    const answer = await connect(context, options.state).request<DecidePermissionResponse>(
      "POST",
      `/v1/permission-requests/${pathId(args.request)}/deny`,
      options.message !== undefined ? { message: options.message } : {},
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
    show(context, options.json, list, () =>
      list.rules.length === 0 ? "no session rules" : list.rules.join("\n"),
    );
  },
});

export const approvalGroup = defineGroup<FlootContext>(
  "approval",
  "tool calls Claude Code asked permission for, and the rules a session added",
  [listCommand, allowCommand, denyCommand, rulesCommand],
);
