import type {
  FlootSessionSummary,
  PermissionRequest,
  SecretRequest,
  TurnRecord,
} from "@bridgeworks/protocol";
import { waitsOnCliLostDecision } from "./cli-lost-card.js";
import { h } from "./dom.js";
import { clockTime, relativeTime, toolLabel } from "./format.js";

/**
 * What of one session waits on a person: its open permission and secret requests, and its latest turn
 * when that turn waits on a decision (a call of it may have run).
 */
export interface Waiting {
  permissions: readonly PermissionRequest[];
  secrets: readonly SecretRequest[];
  decision?: TurnRecord;
}

export const noneWaiting: Waiting = { permissions: [], secrets: [] };

/** A session's requests, and its current turn if that waits on a decision. */
export function waitingOf(
  { currentTurn }: FlootSessionSummary,
  requests: Omit<Waiting, "decision"> = noneWaiting,
): Waiting {
  return currentTurn !== undefined && waitsOnCliLostDecision(currentTurn)
    ? { ...requests, decision: currentTurn }
    : requests;
}

export function waitCount({ permissions, secrets, decision }: Waiting): number {
  return permissions.length + secrets.length + (decision ? 1 : 0);
}

/** Since when the session waits: its oldest open request or decision (the order of the daemon's inbox). */
export function waitingSince({ permissions, secrets, decision }: Waiting): string | undefined {
  const times = [...permissions, ...secrets].map((request) => request.createdAt);
  if (decision) times.push(decision.endedAt ?? decision.updatedAt);
  return times.sort()[0];
}

/**
 * "your approval of Bash", "a secret (API_TOKEN)", "your decision on a call that may have run",
 * "2 approvals and a secret".
 */
export function waitingFor({ permissions, secrets, decision }: Waiting): string {
  if (secrets.length === 0 && permissions.length === 1 && !decision)
    return `your approval of ${toolLabel(permissions[0]!.toolName)}`;
  if (permissions.length === 0 && secrets.length === 1 && !decision) return `a secret (${secrets[0]!.name})`;
  if (permissions.length + secrets.length === 0 && decision)
    return "your decision on a call that may have run";
  const parts = [];
  if (permissions.length > 0)
    parts.push(permissions.length === 1 ? "an approval" : `${permissions.length} approvals`);
  if (secrets.length > 0) parts.push(secrets.length === 1 ? "a secret" : `${secrets.length} secrets`);
  if (decision) parts.push("a decision");
  return parts.join(" and ");
}

/** The badge of a session waiting on a person, or nothing. */
export function waitingBadge(waiting: Waiting): HTMLElement | null {
  const secrets = waiting.secrets.length;
  const permissions = waiting.permissions.length;
  const count = waitCount(waiting);
  if (count === 0) return null;
  const text =
    count === 1
      ? waiting.decision
        ? "needs a decision"
        : secrets === 1
          ? "needs a secret"
          : "needs approval"
      : permissions === count
        ? `${permissions} approvals`
        : secrets === count
          ? `${secrets} secrets`
          : `${count} requests`;
  return h("span", { class: "chip phase-awaiting_secret waiting-badge", "data-waiting": count }, text);
}

/** The inbox line of a waiting session: what it waits for, and since when. */
export function waitingLine(waiting: Waiting): HTMLElement | null {
  const since = waitingSince(waiting);
  if (since === undefined) return null;
  return h(
    "div",
    { class: "session-line session-waiting" },
    h("span", { class: "waiting-for" }, `Waiting for ${waitingFor(waiting)}`),
    h(
      "time",
      { class: "waiting-since", datetime: since, title: new Date(since).toLocaleString() },
      `since ${clockTime(since)} (${relativeTime(since)})`,
    ),
  );
}
