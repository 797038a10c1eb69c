import type { ToolCompletedEvent, ToolStartedEvent } from "@bridgeworks/protocol";
import { diffView } from "./diff-view.js";
import { h, replaceChildren } from "./dom.js";
import type { FileDiff } from "./edit-diff.js";
import { argumentPreview, pretty, toolLabel } from "./format.js";

export interface ToolCard {
  element: HTMLElement;
  status: HTMLElement;
  result: HTMLElement;
  /** Set once its result came. */
  completed: boolean;
}

/**
 * A tool call, collapsed to one line. A file edit (`diffs`) shows its diff instead of its arguments,
 * open unless the diff is long; its summary counts the lines added and removed.
 */
export function toolCard(event: ToolStartedEvent, diffs: readonly FileDiff[] | undefined): ToolCard {
  const status = h("span", { class: "chip chip-running" }, "running");
  const result = h("div", { class: "tool-result" });
  const diff = diffs && diffs.length > 0 ? diffView(diffs) : undefined;
  const preview = diffs?.map((each) => each.path).join(", ") || argumentPreview(event.input);
  const element = h(
    "details",
    {
      class: diff ? "tool tool-edit" : "tool",
      "data-tool-id": event.toolId,
      open: diff ? !diff.long : false,
    },
    h(
      "summary",
      {},
      h("span", { class: "tool-name" }, toolLabel(event.name)),
      h("code", { class: "tool-preview" }, preview),
      diff?.stat,
      status,
    ),
    diff
      ? [h("div", { class: "tool-section-label tool-changes-label" }, "Changes"), diff.element]
      : [
          h("div", { class: "tool-section-label" }, "Arguments"),
          h("pre", { class: "tool-input" }, pretty(event.input)),
        ],
    result,
  );
  return { element, status, result, completed: false };
}

/**
 * What a call without a result is: running, waiting for a person's approval, or, once its turn ended
 * without its result, `may_have_run` (its CLI was gone mid-call) or no result at all.
 */
export type OpenCallState = "running" | "waiting" | "may_have_run" | "no_result";

const openCallChips: Record<OpenCallState, [string, string]> = {
  running: ["chip-running", "running"],
  waiting: ["chip-waiting", "waiting for your approval"],
  may_have_run: ["chip-waiting", "may have run"],
  no_result: ["chip-waiting", "no result"],
};

export function setOpenCallState(card: ToolCard, state: OpenCallState): void {
  if (card.completed) return;
  const [chip, text] = openCallChips[state];
  card.status.className = `chip ${chip}`;
  card.status.textContent = text;
  card.element.dataset.callState = state;
}

/**
 * Its result. A file edit that failed was not applied: its diff stays (what the agent meant to change)
 * under a label that says so, drawn muted and its counts struck through, never as a change made.
 */
export function completeToolCard(card: ToolCard, event: ToolCompletedEvent): void {
  card.completed = true;
  const edit = card.element.classList.contains("tool-edit");
  card.status.className = `chip ${event.isError ? "chip-error" : "chip-ok"}`;
  card.status.textContent = event.isError ? (edit ? "not applied" : "error") : "done";
  if (edit && event.isError) {
    card.element.dataset.applied = "false";
    const label = card.element.querySelector(".tool-changes-label");
    if (label) label.textContent = "Not applied: the edit failed (the error is below)";
    card.element.querySelector("summary .diff-stat")?.setAttribute("title", "not applied");
  }
  replaceChildren(
    card.result,
    h("div", { class: "tool-section-label" }, event.isError ? "Error" : "Result"),
    h("pre", { class: `tool-output${event.isError ? " is-error" : ""}` }, pretty(event.output ?? "")),
  );
}
