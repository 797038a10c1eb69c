import type { DecisionActor } from "@bridgeworks/protocol";

// How a decided, expired or cancelled permission request reads on its card.

/** Who decided, as the card says it: a page's sign-in, or the process behind the CLI or API token. */
function decidedBy(actor: DecisionActor | undefined): string {
  if (actor === undefined) return "";
  if (actor.via === "web") return ` Decided in the web UI (sign-in ${actor.signIn}).`;
  const how = actor.via === "socket" ? "the CLI" : "the API token";
  return actor.peer === undefined
    ? ` Decided through ${how} (process unknown).`
    : ` Decided through ${how} by process ${actor.peer.pid} (${actor.peer.executable}, uid ${actor.peer.uid}).`;
}

export function outcomeOf(
  status: string,
  rule: string | undefined,
  message: string | undefined,
  by?: DecisionActor,
): { status: string; text: string } {
  switch (status) {
    case "allowed":
      return {
        status,
        text: `${rule ? `✓ Allowed for this session: ${rule} is now one of its rules.` : "✓ Allowed once."}${decidedBy(by)}`,
      };
    case "denied":
      return {
        status,
        text: `${message ? `Denied. The agent was told: “${message}”` : "Denied."}${decidedBy(by)}`,
      };
    case "expired":
      return { status, text: "Expired: nobody decided in time, so the call was denied." };
    case "cancelled":
      return { status, text: "The turn ended before a decision." };
    default:
      return { status, text: status };
  }
}
