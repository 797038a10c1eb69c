import type { TurnRecord } from "@bridgeworks/protocol";
import { h } from "./dom.js";

/** The turn a retry or replay continues, as a link to it. */
export function lineage(record: TurnRecord): HTMLElement | null {
  const of = record.retryOf ?? record.replayOf;
  if (!of) return null;
  return jumpLink(
    of,
    record.retryOf ? "retry" : `automatic replay (attempt ${record.attempt})`,
    "muted lineage",
  );
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
