import type { ToolGateSpec } from "./backend-adapter.js";

// How both adapters run the gate hook. Both CLIs run a command hook through `sh -c` and block the
// call only on exit code 2 with a reason on stderr; Codex 0.171 lets the call run on any other exit
// code, on a timeout and when the command is missing (codex-rs/hooks/src/events/pre_tool_use.rs,
// `parse_completed`; measured), and so does Claude Code 2.1.332 unless the hook says
// `"onFailure": "block"` (measured). So the shell turns every other outcome into exit 2, and the
// CLI's own timeout is well past the hook's deadline.

/** Seconds the CLI gives the hook: the hook's deadline plus room for node to start on a busy machine. */
export function gateHookTimeoutSeconds(gate: ToolGateSpec): number {
  return Math.ceil(gate.deadlineMs / 1000) + 30;
}

/** The `sh -c` command line of the gate hook; it ends with 0 (run the call) or 2 (blocked) only. */
export function gateHookShellCommand(gate: ToolGateSpec): string {
  const argv = hookArgv(gate);
  return (
    `NODE_OPTIONS= ${argv}; s=$?; if [ "$s" -ne 0 ] && [ "$s" -ne 2 ]; then ` +
    `echo "floot: this tool call was NOT run: the gate hook failed (exit $s)" >&2; exit 2; fi; exit $s`
  );
}

/**
 * The `PostToolUse` command: the same program reporting a finished call. It never blocks or tells the
 * model anything (the call already ran), so whatever it exits with, the command exits 0.
 */
export function completionHookShellCommand(gate: ToolGateSpec): string {
  return `NODE_OPTIONS= ${hookArgv(gate)} >/dev/null 2>&1; exit 0`;
}

/** The hook program and its deadline, quoted for `sh -c`: the same for both hooks. */
function hookArgv(gate: ToolGateSpec): string {
  return [gate.command, ...gate.args, String(gate.deadlineMs)].map(shellQuote).join(" ");
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
