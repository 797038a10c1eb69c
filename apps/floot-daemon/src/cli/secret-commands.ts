import { defineCommand, defineGroup, UsageError } from "@bridgeworks/cli";
import {
  type FlootSecretRequestList,
  type SubmitSecretResponse,
  secretValueMinLength,
} from "@bridgeworks/protocol";
import type { FlootContext } from "./context.js";
import { connect, daemonOptions, pathId, show } from "./daemon-connection.js";
import { readSecret } from "./secret-prompt.js";

const command = defineCommand<FlootContext>();

const listCommand = command({
  name: "list",
  summary: "list the secret requests waiting for an answer (pending, or orphaned by a restart)",
  options: daemonOptions,
  async run({ options }, context) {
    const list = await connect(context, options.state).request<FlootSecretRequestList>(
      "GET",
      "/v1/secret-requests",
    );
    show(context, options.json, list, () =>
      list.requests.length === 0
        ? "no secret requests"
        : list.requests
            .map((r) => `${r.id}  ${r.name}  ${r.status}  turn ${r.turnId}  ${r.prompt}`)
            .join("\n"),
    );
  },
});

const submitCommand = command({
  name: "submit",
  summary: `answer a secret request: the value (at least ${secretValueMinLength} characters) from stdin, or a prompt that does not echo; never argv`,
  positionals: [{ name: "request", summary: "the request's id" }],
  options: daemonOptions,
  examples: [
    { command: "pass show github/token | floot secret submit sr_1a2b", summary: "from a password store" },
  ],
  async run({ args, options }, context) {
    const client = connect(context, options.state);
    const value = await readSecret(context.stdin, context.stderr);
    if (!value) throw new UsageError("stdin", "the secret is empty");
    const answer = await client.request<SubmitSecretResponse>(
      "POST",
      `/v1/secret-requests/${pathId(args.request)}/submit`,
      { value },
    );
    show(context, options.json, answer, () =>
      answer.deliveredTo === "call"
        ? `submitted ${answer.request.name} to the waiting turn ${answer.request.turnId}`
        : `submitted ${answer.request.name}; its turn had ended, retry turn ${answer.retryTurnId} carries it`,
    );
  },
});

export const secretGroup = defineGroup<FlootContext>("secret", "secrets the agents asked for", [
  listCommand,
  submitCommand,
]);
