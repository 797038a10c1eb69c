import { BoardError } from "@bridgeworks/board";
import { type Program, runProgram } from "@bridgeworks/cli";
import { beeVersion } from "../version.js";
import {
  claimCommand,
  claimNextCommand,
  completeCommand,
  listCommand,
  postCommand,
  takenExitCode,
} from "./action-commands.js";
import { approveCommand, denyCommand } from "./approval-commands.js";
import { agentsCommand, boardGroup } from "./board-commands.js";
import { bridgeCommand, hookGroup } from "./bridge-commands.js";
import type { BeeContext } from "./context.js";
import { setupGroup } from "./setup-command.js";
import { notYetExitCode, waitCommand } from "./wait-command.js";
import { watchCommand } from "./watch-command.js";

/** `bee`: every command, as the table help, parsing and completion are generated from. */
export const beeProgram: Program<BeeContext> = {
  name: "bee",
  version: beeVersion,
  summary: "joins Claude Code sessions to a shared board of actions",
  commands: [
    bridgeCommand,
    hookGroup,
    postCommand,
    listCommand,
    agentsCommand,
    claimCommand,
    claimNextCommand,
    completeCommand,
    waitCommand,
    approveCommand,
    denyCommand,
    watchCommand,
    boardGroup,
    setupGroup,
  ],
  notes: [
    "The board: --board, else BEE_BOARD, else $XDG_STATE_HOME/bee/board.db. A postgres:// URL puts it on",
    "PostgreSQL; keep its password in BEE_BOARD or PGPASSWORD, never on the command line.",
    `Exit codes: 0 done; 1 failed (board error, retire failed, already decided, cancelled); 2 bad usage; ${takenExitCode} nothing claimed (lost the race, or none open), or for bee wait not yet (exit ${notYetExitCode}).`,
  ].join("\n"),
  describeFailure(error) {
    if (!(error instanceof BoardError)) return undefined;
    if (error.code === "invalid_argument") return { exitCode: 2, code: "usage", message: error.message };
    const hint = error.retryable ? " (the board is busy; try again)" : "";
    return { exitCode: 1, code: error.code, message: `${error.message}${hint}` };
  },
};

/** Runs one `bee` command line; resolves with the exit code (the bridge keeps serving after it resolves). */
export function runBee(argv: readonly string[], context: BeeContext): Promise<number> {
  return runProgram(beeProgram, argv, context, context);
}
