import type { ToolAdmission } from "@bridgeworks/protocol";

// What the model is told when its turn goes on after its CLI was gone (a reboot, a killed keeper):
// the prompt of the continuation turn, on the same conversation. Short, and it names what to check.

/** The call as a person and the model read it: its tool and its input. */
export function describeCall(call: Pick<ToolAdmission, "toolName" | "inputPreview">): string {
  return `${call.toolName} ${call.inputPreview}`;
}

export type CliLostNote =
  | { kind: "continue" }
  | { kind: "run_again" | "skip"; calls: readonly Pick<ToolAdmission, "toolName" | "inputPreview">[] };

export function cliLostNote(note: CliLostNote): string {
  const head =
    "[floot] Your process ended before this turn finished (the machine or the daemon hosting you " +
    "restarted). The conversation above is what was kept.";
  switch (note.kind) {
    case "continue":
      return (
        `${head} Every tool call you started had finished. If a result is missing above, check the ` +
        "state before repeating an action. Continue the task from where you left off."
      );
    case "run_again":
      return (
        `${head} This tool call may have been cut off while it ran: ${note.calls.map(describeCall).join("; ")}. ` +
        "The user asked you to run it again. Run it again, then continue the task."
      );
    case "skip":
      return (
        `${head} This tool call may or may not have run: ${note.calls.map(describeCall).join("; ")}. ` +
        "The user asked you not to run it again. Continue the task without it; check its effect first " +
        "if what follows depends on it."
      );
  }
}
