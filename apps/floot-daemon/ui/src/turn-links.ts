import type { TurnRecord } from "@bridgeworks/protocol";
import { h } from "./dom.js";

/** The turn a retry, replay or continuation carries on, as a link to it. */
export function lineage(record: TurnRecord): HTMLElement | null {
  const of = record.retryOf ?? record.replayOf ?? record.continues;
  if (!of) return null;
  const text = record.retryOf
    ? "retry"
    : record.replayOf
      ? `automatic replay (attempt ${record.attempt})`
      : "carries on after its CLI was gone";
  return jumpLink(of, text, "muted lineage");
}

/** What a later turn is to this one, for the link to it. */
export function successorLabel(successor: TurnRecord): string {
  if (successor.replayOf) return `Replayed as #${successor.seq}.`;
  if (successor.continues) return `Carried on as #${successor.seq}.`;
  return `Retried as #${successor.seq}.`;
}

// The location hash is the page's route, so links between turns scroll instead of navigating.
export function jumpLink(turnId: string, text: string, className = "link"): HTMLElement {
  return h(
    "button",
    {
      type: "button",
      class: `link-button ${className}`,
      onclick: () =>
        document.getElementById(`turn-${turnId}`)?.scrollIntoView({ behavior: "smooth", block: "start" }),
    },
    text,
  );
}
