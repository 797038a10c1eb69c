import { type Program, runProgram } from "@bridgeworks/cli";
import { ClientError } from "../client/api-client.js";
import { StateDirLockedError, stateDirLockedExitCode } from "../daemon/state-lock.js";
import { flootVersion } from "../version.js";
import { approvalGroup } from "./approval-commands.js";
import { backendsCommand } from "./backends-command.js";
import type { FlootContext } from "./context.js";
import { daemonCommand } from "./daemon-command.js";
import { openCommand } from "./open-command.js";
import { secretGroup } from "./secret-commands.js";
import { PromptCancelled } from "./secret-prompt.js";
import { sessionGroup } from "./session-commands.js";
import { sendCommand, turnGroup } from "./turn-commands.js";

/** `floot`: every command, as the table help, parsing and completion are generated from. */
export const flootProgram: Program<FlootContext> = {
  name: "floot",
  version: flootVersion,
  summary: "hosts Claude Code and Codex sessions whose turns survive a restart",
  commands: [
    daemonCommand,
    openCommand,
    sessionGroup,
    sendCommand,
    turnGroup,
    secretGroup,
    approvalGroup,
    backendsCommand,
  ],
  notes: [
    "Every command finds its daemon through <state>/daemon.json: --state, else FLOOT_STATE_DIR, else",
    "$XDG_STATE_HOME/floot, else ~/.local/state/floot.",
    `Exit codes: 0 ok; 1 failure (or a followed turn that did not complete); 2 usage; ${stateDirLockedExitCode} state dir locked.`,
  ].join("\n"),
  describeFailure(error) {
    if (error instanceof StateDirLockedError) {
      return {
        exitCode: stateDirLockedExitCode,
        code: "state_dir_locked",
        message: `${error.message}; is a daemon already running?`,
      };
    }
    if (error instanceof ClientError)
      return { exitCode: 1, code: error.code ?? "failed", message: error.message };
    if (error instanceof PromptCancelled) return { exitCode: 1, code: "cancelled", message: error.message };
    return undefined;
  },
};

/** Runs one `floot` command line; resolves with the exit code (the daemon resolves only when it stops). */
export function runFloot(argv: readonly string[], context: FlootContext): Promise<number> {
  const output = {
    stdout: (text: string) => void context.stdout.write(text),
    stderr: (text: string) => void context.stderr.write(text),
  };
  return runProgram(flootProgram, argv, output, context);
}
