import { BoardError } from "@bridgeworks/board";
import { defineCommand, integer, UsageError } from "@bridgeworks/cli";
import {
  ActionBody,
  ActionId,
  ActionKind,
  ActionRecipient,
  ActionResult,
  AgentName,
  Cursor,
  HumanSender,
} from "@bridgeworks/protocol";
import { retryWhileBusy } from "../board-access.js";
import { defaultPostKind } from "../tool-arguments.js";
import { boardOptions, parseValue, withBoard } from "./board-options.js";
import type { BeeContext } from "./context.js";
import { describeHolder, describeRecord } from "./describe-records.js";

/** bee's own exit code beyond 0/1/2: nothing was claimed (the race was lost, or nothing was open). */
export const takenExitCode = 3;

const command = defineCommand<BeeContext>();
const busyRetry = { withinMs: 5000 };

const asOption = {
  type: "string",
  placeholder: "NAME",
  summary: "act as agent:<NAME>#… (default human)",
} as const;

export const postCommand = command({
  name: "post",
  summary: "post an action to an agent, or to every agent with *; prints its id",
  positionals: [{ name: "body", summary: "the action's text" }],
  options: {
    to: {
      type: "string",
      placeholder: "AGENT|*",
      summary: "the agent it is for, or * for anyone",
      required: true,
    },
    kind: {
      type: "string",
      placeholder: "KIND",
      summary: `what kind of action (default ${defaultPostKind})`,
    },
    from: { type: "string", placeholder: "human[:NAME]", summary: "who sends it (default human)" },
    ...boardOptions,
  },
  examples: [
    { command: 'bee post --to reviewer "review PR 12"', summary: "a task for the agent named reviewer" },
    {
      command: 'bee wait "$(bee post --to reviewer "review PR 12")" --until completed',
      summary: "post, then wait until it is done",
    },
  ],
  async run({ args, options }, context) {
    const draft = {
      to: parseValue(ActionRecipient, options.to, "--to"),
      kind: parseValue(ActionKind, options.kind ?? defaultPostKind, "--kind"),
      from: parseValue(HumanSender, options.from ?? "human", "--from"),
      body: parseValue(ActionBody, args.body, "<body>"),
    };
    const record = await withBoard(context, options.board, (board) =>
      retryWhileBusy(() => board.post(draft), busyRetry),
    );
    if (options.json) {
      context.stdout(`${JSON.stringify(record)}\n`);
      return;
    }
    // The id alone on stdout, for `id=$(bee post ...)`; the words for a person on stderr.
    context.stdout(`${record.id}\n`);
    context.stderr(`posted ${record.id} to ${record.to}; bee wait ${record.id} waits for it\n`);
  },
});

export const listCommand = command({
  name: "list",
  summary: "list the board's actions, oldest first, and the cursor to continue from",
  options: {
    since: { type: "string", placeholder: "CURSOR", summary: "only actions after this cursor" },
    limit: { type: "string", placeholder: "N", summary: "at most N actions (1-500)", parse: integer(1, 500) },
    ...boardOptions,
  },
  async run({ options }, context) {
    const cursor = options.since === undefined ? undefined : parseValue(Cursor, options.since, "--since");
    const page = await withBoard(context, options.board, (board) =>
      board.list({ cursor, limit: options.limit }),
    );
    if (options.json) {
      context.stdout(`${JSON.stringify(page)}\n`);
      return;
    }
    if (page.records.length === 0) {
      context.stdout(cursor === undefined ? "no actions on the board\n" : "no actions after that cursor\n");
    }
    for (const record of page.records) context.stdout(`${describeRecord(record)}\n`);
    context.stdout(`cursor ${page.cursor}\n`);
  },
});

export const claimCommand = command({
  name: "claim",
  summary: `claim an action (exit ${takenExitCode} when another agent has it)`,
  positionals: [{ name: "id", summary: "the action's id" }],
  options: { as: asOption, ...boardOptions },
  examples: [
    { command: "bee claim a-12 --as alice", summary: "registers agent:alice#… and claims a-12 as it" },
  ],
  async run({ args, options }, context) {
    const id = parseValue(ActionId, args.id, "<id>");
    const name = parseValue(AgentName, options.as ?? "human", "--as");
    const outcome = await withBoard(context, options.board, async (board) => {
      // A person's identity: no lease, since no process of theirs renews one.
      const agent = await retryWhileBusy(() => board.register(name, { lease: false }), busyRetry);
      return retryWhileBusy(() => board.claim(agent.identity, id), busyRetry);
    });
    if (options.json) context.stdout(`${JSON.stringify(outcome)}\n`);
    else if (outcome.outcome === "claimed") context.stdout(`claimed ${id} as ${outcome.record.claimedBy}\n`);
    else context.stdout(`taken: ${id} is ${describeHolder(outcome.record)}\n`);
    return outcome.outcome === "claimed" ? 0 : takenExitCode;
  },
});

export const claimNextCommand = command({
  name: "claim-next",
  summary: `claim the oldest open action for NAME or * (exit ${takenExitCode} when there is none)`,
  options: { as: asOption, ...boardOptions },
  examples: [
    { command: "bee claim-next --as alice", summary: "registers agent:alice#… and claims its next action" },
  ],
  async run({ options }, context) {
    const name = parseValue(AgentName, options.as ?? "human", "--as");
    const outcome = await withBoard(context, options.board, async (board) => {
      const agent = await retryWhileBusy(() => board.register(name, { lease: false }), busyRetry);
      return retryWhileBusy(() => claimNextOnce(() => board.claimNext(agent.identity)), busyRetry);
    });
    if (options.json) context.stdout(`${JSON.stringify(outcome)}\n`);
    else if (outcome.outcome === "claimed")
      context.stdout(`claimed ${outcome.record.id} as ${outcome.record.claimedBy}\n`);
    else context.stdout(`none: no open action for ${name} or *\n`);
    return outcome.outcome === "claimed" ? 0 : takenExitCode;
  },
});

/**
 * A claimNext whose answer was lost may have claimed an action: repeating it could leave that action
 * held by an identity nobody acts for, so an unsure failure is reported and never retried.
 */
async function claimNextOnce<T>(claim: () => Promise<T>): Promise<T> {
  try {
    return await claim();
  } catch (error) {
    if (!(error instanceof BoardError) || !error.unsure) throw error;
    // Not a BoardError, so the busy retry stops here.
    throw new Error(
      `${error.message}: run \`bee list\` and look for an action claimed by an identity of this name before claiming again`,
      { cause: error },
    );
  }
}

export const completeCommand = command({
  name: "complete",
  summary: "complete an action claimed by an identity of NAME (exit 1 when it was cancelled)",
  positionals: [{ name: "id", summary: "the action's id" }],
  options: {
    as: asOption,
    result: { type: "string", placeholder: "TEXT", summary: "what came of it" },
    ...boardOptions,
  },
  async run({ args, options }, context) {
    const id = parseValue(ActionId, args.id, "<id>");
    const name = parseValue(AgentName, options.as ?? "human", "--as");
    const result =
      options.result === undefined ? undefined : parseValue(ActionResult, options.result, "--result");
    const outcome = await withBoard(context, options.board, async (board) => {
      const record = await board.get(id);
      // The CLI completes as the identity that claimed the action, which must carry the name it acts as.
      if (record.state !== "claimed" && record.state !== "done") {
        throw new UsageError("<id>", `${id} is ${record.state}; only a claimed action can be completed`);
      }
      if (!record.claimedBy.startsWith(`agent:${name}#`)) {
        throw new UsageError(
          "--as",
          `${id} is claimed by ${record.claimedBy}, not by an identity of ${name}`,
        );
      }
      return retryWhileBusy(() => board.complete(record.claimedBy, id, result), busyRetry);
    });
    if (options.json) context.stdout(`${JSON.stringify(outcome)}\n`);
    else
      context.stdout(
        outcome.outcome === "completed" ? `completed ${id}\n` : `cancelled: ${id} was cancelled\n`,
      );
    return outcome.outcome === "completed" ? 0 : 1;
  },
});
