import { redactBoardLocation } from "@bridgeworks/board";
import { defineCommand, UsageError } from "@bridgeworks/cli";
import { ActionState, AgentName } from "@bridgeworks/protocol";
import { runWatch } from "../watch/watch-loop.js";
import { boardLocation, boardOptions, parseValue, withBoard } from "./board-options.js";
import type { BeeContext } from "./context.js";

const command = defineCommand<BeeContext>();

/** Leaves the alternate screen and shows the cursor again: the terminal as it was. */
const restoreTerminal = "\x1b[?25h\x1b[?1049l";

export const watchCommand = command({
  name: "watch",
  summary: "the board live in the terminal: agents and their leases, approvals waiting, actions, events",
  description:
    "Redrawn on the board's own wake-ups (every change, and the moment a lease lapses), never polled.\n" +
    "q or Ctrl-C quits. Plain ANSI on the alternate screen, so it works over SSH; when stdout is not a\n" +
    "terminal it prints one line per event instead.",
  options: {
    agent: { type: "string", placeholder: "NAME", summary: "only what concerns this agent" },
    state: {
      type: "string",
      placeholder: "STATE,...",
      summary: `only actions in these states (${ActionState.options.join(", ")})`,
    },
    board: boardOptions.board,
  },
  examples: [{ command: "bee watch --agent reviewer --state open,claimed", summary: "what reviewer has" }],
  async run({ options }, context) {
    const agent = options.agent === undefined ? undefined : parseValue(AgentName, options.agent, "--agent");
    const states = options.state?.split(",").map((state) => {
      if (!(ActionState.options as readonly string[]).includes(state)) {
        throw new UsageError(
          "--state",
          `must be states from ${ActionState.options.join(", ")}, got ${JSON.stringify(state)}`,
        );
      }
      return state;
    });
    const tty = process.stdout.isTTY === true;
    const stopping = new AbortController();
    const stop = () => stopping.abort(new Error("stopped"));
    const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
    for (const signal of signals) process.on(signal, stop);
    const onKey = (key: Buffer) => {
      // q, Q, Ctrl-C (raw mode delivers it as a byte, not a signal) or Ctrl-D.
      if (key.some((byte) => byte === 0x71 || byte === 0x51 || byte === 0x03 || byte === 0x04)) stop();
    };
    const input = process.stdin.isTTY === true ? process.stdin : undefined;
    if (input !== undefined) {
      input.setRawMode(true);
      input.on("data", onKey);
    }
    if (tty) context.stdout("\x1b[?1049h\x1b[?25l");
    try {
      await withBoard(context, options.board, (board) =>
        runWatch({
          board,
          filter: { agent, states },
          title: redactBoardLocation(boardLocation(context, options.board)),
          output: {
            tty,
            screen: () => ({ columns: process.stdout.columns ?? 80, rows: process.stdout.rows ?? 24 }),
            write: context.stdout,
          },
          stopping: stopping.signal,
          onResize: (redraw) => process.stdout.on("resize", redraw),
        }),
      );
    } finally {
      if (tty) context.stdout(restoreTerminal);
      if (input !== undefined) {
        input.off("data", onKey);
        input.setRawMode(false);
        input.pause();
      }
      for (const signal of signals) process.off(signal, stop);
    }
  },
});
