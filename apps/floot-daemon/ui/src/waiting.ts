import type { PermissionRequest, SecretRequest } from "@bridgeworks/protocol";
import { h } from "./dom.js";
import { clockTime, relativeTime, toolLabel } from "./format.js";

/** What of one session waits on a person: its open permission and secret requests. */
export interface Waiting {
  permissions: readonly PermissionRequest[];
  secrets: readonly SecretRequest[];
}

export const noneWaiting: Waiting = { permissions: [], secrets: [] };

export function waitCount({ permissions, secrets }: Waiting): number {
  return permissions.length + secrets.length;
}

/** Since when the session waits: its oldest open request (the order the daemon's inbox pages use). */
export function waitingSince({ permissions, secrets }: Waiting): string | undefined {
  const times = [...permissions, ...secrets].map((request) => request.createdAt).sort();
  return times[0];
}

/** "your approval of Bash", "a secret (API_TOKEN)", "2 approvals and a secret". */
export function waitingFor({ permissions, secrets }: Waiting): string {
  if (secrets.length === 0 && permissions.length === 1)
    return `your approval of ${toolLabel(permissions[0]!.toolName)}`;
  if (permissions.length === 0 && secrets.length === 1) return `a secret (${secrets[0]!.name})`;
  const parts = [];
  if (permissions.length > 0)
    parts.push(permissions.length === 1 ? "an approval" : `${permissions.length} approvals`);
  if (secrets.length > 0) parts.push(secrets.length === 1 ? "a secret" : `${secrets.length} secrets`);
  return parts.join(" and ");
}

/** The badge of a session waiting on a person, or nothing. */
export function waitingBadge(waiting: Waiting): HTMLElement | null {
  const secrets = waiting.secrets.length;
  const permissions = waiting.permissions.length;
  if (secrets + permissions === 0) return null;
  const text =
    permissions === 0
      ? secrets === 1
        ? "needs a secret"
        : `${secrets} secrets`
      : secrets === 0
        ? permissions === 1
          ? "needs approval"
          : `${permissions} approvals`
        : `${secrets + permissions} requests`;
  return h(
    "span",
    { class: "chip phase-awaiting_secret waiting-badge", "data-waiting": secrets + permissions },
    text,
  );
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
