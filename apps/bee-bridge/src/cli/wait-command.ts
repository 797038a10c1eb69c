import { type Board, BoardError } from "@bridgeworks/board";
import { defineCommand, integer } from "@bridgeworks/cli";
import {
  ActionId,
  type ActionRecord,
  type ActionWaitResult,
  type ActionWaitUntil,
} from "@bridgeworks/protocol";
import { openBeeBoard } from "../board-access.js";
import { boardLocation, boardOptions, parseValue } from "./board-options.js";
import type { BeeContext } from "./context.js";
import { describeHolder } from "./describe-records.js";

/** bee wait's exit code when the bound passed first: not yet, which a later wait may still see. */
export const notYetExitCode = 3;

const command = defineCommand<BeeContext>();
// One board wait at a time is bounded; a longer `bee wait` is several in a row.
const longestWaitMs = 3_600_000;

export const waitCommand = command({
  name: "wait",
  summary: `wait until an action is claimed by a live agent or completed (exit ${notYetExitCode}: not yet)`,
  description:
    "Says the action's state as the board has it when the wait ends: a claim whose holder died is\n" +
    "released (after the lease TTL) and never reported as claimed. Rides out a PostgreSQL restart; run\n" +
    "it again after a crash of either side, since the state lives on the board.",
  positionals: [{ name: "id", summary: "the action's id (what bee post printed)" }],
  options: {
    until: {
      type: "string",
      choices: ["claimed", "completed"],
      summary: "claimed: a live agent holds it (or did and finished); completed: closed (default)",
    },
    timeout: {
      type: "string",
      placeholder: "SECONDS",
      summary: "give up after SECONDS (default: as long as it takes)",
      parse: integer(1, 31_536_000),
    },
    ...boardOptions,
  },
  examples: [
    {
      command: "bee wait act_0123456789abcdef --until claimed --timeout 60",
      summary: "has anyone taken it?",
    },
  ],
  async run({ args, options }, context) {
    const id = parseValue(ActionId, args.id, "<id>");
    const until: ActionWaitUntil = options.until ?? "completed";
    const deadline =
      options.timeout === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeout * 1000;
    const location = boardLocation(context, options.board);
    const board = await whileBusy(() => openBeeBoard(location, { busyTimeoutMs: 2000 }), deadline);
    let result: ActionWaitResult;
    try {
      result = await waitUntil(board, id, until, deadline);
    } finally {
      await board.close();
    }
    const timedOut = !result.reached && result.record.state !== "cancelled";
    if (options.json) context.stdout(`${JSON.stringify({ ...result, timedOut })}\n`);
    else context.stdout(`${describeOutcome(result.record, until, timedOut)}\n`);
    if (result.reached) return 0;
    return timedOut ? notYetExitCode : 1;
  },
});

/** Waits in bounded steps until the board says `until` (or never) or the deadline passes; rides out `busy`. */
async function waitUntil(
  board: Board,
  id: ActionId,
  until: ActionWaitUntil,
  deadline: number,
): Promise<ActionWaitResult> {
  for (;;) {
    const timeoutMs = Math.max(0, Math.min(longestWaitMs, deadline - Date.now()));
    const result = await whileBusy(
      () => board.waitForAction(id, until, { timeoutMs }),
      deadline,
      () => board.get(id).then((record) => ({ reached: false, record })),
    );
    if (result.reached || result.record.state === "cancelled" || Date.now() >= deadline) return result;
  }
}

/** Repeats `call` while the board is busy (a server restarting); at the deadline, `last` answers. */
async function whileBusy<T>(call: () => Promise<T>, deadline: number, last?: () => Promise<T>): Promise<T> {
  for (let pause = 100; ; pause = Math.min(pause * 2, 2000)) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof BoardError) || !error.retryable) throw error;
      if (Date.now() + pause >= deadline) {
        if (last !== undefined) return last();
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

function describeOutcome(record: ActionRecord, until: ActionWaitUntil, timedOut: boolean): string {
  const state = describeHolder(record);
  if (timedOut) {
    const now = record.state === "open" ? "open, nobody holds it" : state;
    return `not yet ${until}: ${record.id} is ${now}`;
  }
  const result = "result" in record && record.result !== undefined ? `: ${record.result}` : "";
  return `${record.id} is ${state}${result}`;
}
