import type { FlootSessionSummary } from "@bridgeworks/protocol";
import { h } from "./dom.js";
import { isActive, phaseLabels, relativeTime, shortId } from "./format.js";
import { type Waiting, waitCount, waitingBadge, waitingLine } from "./waiting.js";

/** One row of the sessions list: backend, id, title, workspace, its current turn, and what waits on a person. */
export function sessionRow({ session, currentTurn }: FlootSessionSummary, waiting: Waiting): HTMLElement {
  const turn = currentTurn;
  return h(
    "li",
    {
      class: "session-row",
      "data-session-id": session.id,
      "data-created-at": session.createdAt,
      ...(waitCount(waiting) > 0 && { "data-waiting": "true" }),
    },
    h(
      "a",
      { href: `#/s/${encodeURIComponent(session.id)}`, class: "session-link" },
      h(
        "div",
        { class: "session-line" },
        h("span", { class: `badge badge-${session.backend}` }, session.backend),
        h("code", { class: "session-id", title: session.id }, shortId(session.id)),
        session.title ? h("span", { class: "session-title" }, session.title) : null,
        h("span", { class: "session-workspace", title: session.workspace }, session.workspace),
        waitingBadge(waiting),
      ),
      waitingLine(waiting),
      h(
        "div",
        { class: "session-line session-turn" },
        turn
          ? [
              isActive(turn.phase) && waiting.permissions.length > 0
                ? h("span", { class: "chip phase-awaiting_approval" }, "waiting for your approval")
                : h("span", { class: `chip phase-${turn.phase}` }, phaseLabels[turn.phase]),
              h("span", { class: "turn-prompt" }, `#${turn.seq} ${turn.input.prompt}`),
              session.queuedTurns > 0
                ? h("span", { class: "muted" }, `+${session.queuedTurns} queued`)
                : null,
              h(
                "time",
                { class: "muted", datetime: turn.updatedAt },
                isActive(turn.phase) ? "now" : relativeTime(turn.updatedAt),
              ),
            ]
          : h("span", { class: "muted" }, `No turns yet · created ${relativeTime(session.createdAt)}`),
      ),
    ),
  );
}
