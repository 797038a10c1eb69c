import { type CliLostDecision, mayHaveRunErrorCode, type TurnRecord } from "@bridgeworks/protocol";
import { h } from "./dom.js";

const chosen: Record<CliLostDecision, string> = {
  run_again: "You chose to run it again.",
  skip: "You chose to go on without it.",
  stop: "You chose to stop here.",
};

/** Whether the turn waits on a person's decision: its CLI was gone while a call may have run. */
export function waitsOnCliLostDecision(record: TurnRecord): boolean {
  return (
    record.phase === "interrupted" &&
    record.error?.code === mayHaveRunErrorCode &&
    record.cliLostDecision === undefined
  );
}

/**
 * The decision card of a turn whose CLI was gone while a tool call may have run halfway: the call, as
 * the journal recorded it before it ran, and the three choices; once decided, which one was made.
 */
export function cliLostCard(
  record: TurnRecord,
  decide: (decision: CliLostDecision) => void,
  link: HTMLElement | null,
): HTMLElement {
  const decided = record.cliLostDecision;
  const button = (decision: CliLostDecision, label: string, quiet = false) =>
    h(
      "button",
      {
        type: "button",
        class: quiet ? "button button-quiet" : "button",
        "data-decision": decision,
        onclick: (event: Event) => {
          (event.currentTarget as HTMLButtonElement).disabled = true;
          decide(decision);
        },
      },
      label,
    );
  return h(
    "div",
    { class: "note note-warn cli-lost", role: decided ? null : "group", "aria-label": "May have run" },
    h("strong", {}, decided ? "Decided. " : "Waiting on you. "),
    "This turn's CLI was gone (a reboot or a killed keeper) while a tool call may have run halfway.",
    h("pre", { class: "cli-lost-calls" }, record.error?.message ?? ""),
    decided
      ? h("p", {}, chosen[decided], " ", link)
      : h(
          "div",
          { class: "cli-lost-choices" },
          button("run_again", "Run it again"),
          button("skip", "Skip it"),
          button("stop", "Stop", true),
        ),
  );
}
