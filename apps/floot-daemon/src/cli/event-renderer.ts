import type { TurnEventEnvelope, TurnRecord } from "@bridgeworks/protocol";

// How turns and their events read in a terminal.

/** One line per event worth showing; undefined for the rest (usage, partial deltas…). */
export function renderEvent({ event }: TurnEventEnvelope): string | undefined {
  switch (event.type) {
    case "assistant.text":
      return event.text;
    case "reasoning":
      return `(thinking) ${event.text}`;
    case "tool.started":
      return `-> ${event.name} ${JSON.stringify(event.input)}`;
    case "tool.completed":
      return `<- ${event.toolId}${event.isError ? " (error)" : ""}`;
    case "secret.requested":
      return `secret requested: ${event.name} — ${event.prompt}\n   answer with: floot secret submit ${event.requestId}`;
    case "secret.resolved":
      return `secret request ${event.requestId} ${event.status}`;
    case "permission.requested":
      return `permission requested: ${event.toolName}\n${event.inputSummary.replace(/^/gm, "    ")}\n   decide with: floot approval allow|deny ${event.requestId}`;
    case "permission.resolved":
      return `permission request ${event.requestId} ${event.status}${event.message !== undefined ? `: ${event.message}` : ""}`;
    case "error":
      return `error: ${event.message}`;
    case "warning":
      return `warning: ${event.message}`;
    case "phase":
      return `[${event.phase}]`;
    case "terminal":
      return `[${event.outcome}]${event.error ? ` ${event.error.code}: ${event.error.message}` : ""}${
        event.continuedBy ? ` (continued by ${event.continuedBy})` : ""
      }`;
    default:
      return undefined;
  }
}

export function describeTurn(turn: TurnRecord): string {
  const lines = [
    `${turn.id}  ${turn.phase}  session ${turn.sessionId}  #${turn.seq}  attempt ${turn.attempt}`,
    `  events ${turn.eventCount}${turn.effects.length ? `, effects ${turn.effects.join(",")}` : ""}`,
  ];
  if (turn.conversationId) lines.push(`  conversation ${turn.conversationId}`);
  if (turn.error) lines.push(`  ${turn.error.code}: ${turn.error.message}`);
  if (turn.retryOf) lines.push(`  retry of ${turn.retryOf}`);
  if (turn.replayOf) lines.push(`  replay of ${turn.replayOf}`);
  return lines.join("\n");
}
