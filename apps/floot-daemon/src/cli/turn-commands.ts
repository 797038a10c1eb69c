import { defineCommand, defineGroup, integer, UsageError } from "@bridgeworks/cli";
import type { FlootCliLostDecided, TurnRecord } from "@bridgeworks/protocol";
import type { FlootClient } from "../client/api-client.js";
import type { FlootContext } from "./context.js";
import { connect, daemonOptions, pathId, show } from "./daemon-connection.js";
import { describeTurn, renderEvent } from "./event-renderer.js";
import { startSpinner } from "./spinner.js";

const command = defineCommand<FlootContext>();

export const sendCommand = command({
  name: "send",
  summary: "queue a turn on a session; prints its id, or follows it with --follow",
  positionals: [
    { name: "session", summary: "the session's id" },
    {
      name: "prompt",
      summary: "the prompt (its words are joined with spaces); - reads it from stdin, off argv",
      variadic: true,
    },
  ],
  options: {
    follow: { type: "boolean", summary: "print its events until it ends; exit 1 unless it completed" },
    ...daemonOptions,
  },
  examples: [
    { command: "floot send s_1a2b - --follow < prompt.md", summary: "the prompt from stdin, kept off argv" },
    { command: 'floot send s_1a2b "fix the failing test" --follow', summary: "send and watch" },
  ],
  async run({ args, options }, context) {
    const prompt =
      args.prompt.length === 1 && args.prompt[0] === "-"
        ? await readPrompt(context.stdin)
        : args.prompt.join(" ");
    const client = connect(context, options.state);
    const turn = await client.request<TurnRecord>("POST", `/v1/sessions/${pathId(args.session)}/turns`, {
      prompt,
    });
    if (!options.follow) return show(context, options.json, turn, () => turn.id);
    if (!options.json) context.stderr.write(`turn ${turn.id} (${turn.phase})\n`);
    return followTurn(client, turn.id, 0, options.json, context);
  },
});

/** All of stdin, less one final newline; an empty prompt is a usage error. */
async function readPrompt(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer | string));
  const text = Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
  if (text.trim() === "")
    throw new UsageError("prompt", "stdin held no prompt (- reads the prompt from stdin)");
  return text;
}

const turnArgument = [{ name: "turn", summary: "the turn's id" }] as const;

const showCommand = command({
  name: "show",
  summary: "show a turn: phase, attempt, events, effects, error",
  positionals: turnArgument,
  options: daemonOptions,
  async run({ args, options }, context) {
    const turn = await connect(context, options.state).request<TurnRecord>(
      "GET",
      `/v1/turns/${pathId(args.turn)}`,
    );
    show(context, options.json, turn, () => describeTurn(turn));
  },
});

const currentCommand = command({
  name: "current",
  summary: "show a session's current turn (the active one, else the latest)",
  positionals: [{ name: "session", summary: "the session's id" }],
  options: daemonOptions,
  async run({ args, options }, context) {
    const path = `/v1/sessions/${pathId(args.session)}/current-turn`;
    const turn = await connect(context, options.state).request<TurnRecord>("GET", path);
    show(context, options.json, turn, () => describeTurn(turn));
  },
});

const followCommand = command({
  name: "follow",
  summary: "print a turn's events from index N on, live, until it ends; exit 1 unless it completed",
  positionals: turnArgument,
  options: {
    from: {
      type: "string",
      placeholder: "N",
      summary: "the first event index (default 0)",
      parse: integer(0, 999_999_999),
    },
    ...daemonOptions,
  },
  run({ args, options }, context) {
    return followTurn(connect(context, options.state), args.turn, options.from ?? 0, options.json, context);
  },
});

function turnAction(name: "retry" | "cancel", summary: string) {
  return command({
    name,
    summary,
    positionals: turnArgument,
    options: daemonOptions,
    async run({ args, options }, context) {
      const path = `/v1/turns/${pathId(args.turn)}/${name}`;
      const turn = await connect(context, options.state).request<TurnRecord>("POST", path);
      show(context, options.json, turn, () => describeTurn(turn));
    },
  });
}

const decideCommand = command({
  name: "decide",
  summary: "for a turn waiting on you because a tool call may have run: run it again, skip it, or stop",
  positionals: [
    { name: "turn", summary: "the turn's id (its error is may_have_run)" },
    { name: "decision", summary: "what to do with the call", choices: ["run-again", "skip", "stop"] },
  ],
  options: daemonOptions,
  examples: [{ command: "floot turn decide t_1a2b run-again", summary: "run the cut-off call once more" }],
  async run({ args, options }, context) {
    const path = `/v1/turns/${pathId(args.turn)}/cli-lost-decision`;
    const decision = args.decision.replace("-", "_");
    const decided = await connect(context, options.state).request<FlootCliLostDecided>("POST", path, {
      decision,
    });
    show(context, options.json, decided, () =>
      decided.continuation
        ? `turn ${decided.turn.id}: ${args.decision}; carried on as turn ${decided.continuation.id}`
        : `turn ${decided.turn.id}: stopped`,
    );
  },
});

export const turnGroup = defineGroup<FlootContext>("turn", "turns: show, follow, retry, cancel, decide", [
  showCommand,
  currentCommand,
  followCommand,
  turnAction("retry", "retry a failed, cancelled or interrupted turn (the same retry every time)"),
  turnAction("cancel", "cancel a turn; its CLI's process group is ended first"),
  decideCommand,
]);

/** Prints a turn's events until its terminal one; 0 when it completed, else 1. */
async function followTurn(
  client: FlootClient,
  turnId: string,
  from: number,
  json: boolean,
  context: FlootContext,
): Promise<number> {
  let outcome: string | undefined;
  const spinner = startSpinner(context.stderr);
  try {
    await client.follow(turnId, from, (envelope) => {
      spinner.bump();
      const line = json ? JSON.stringify(envelope) : renderEvent(envelope);
      if (line !== undefined) context.stdout.write(`${line}\n`);
      if (envelope.event.type === "terminal") outcome = envelope.event.outcome;
    });
  } finally {
    spinner.stop();
  }
  return outcome === "completed" ? 0 : 1;
}
