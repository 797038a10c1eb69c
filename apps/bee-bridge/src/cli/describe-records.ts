import type { ActionRecord, AgentRecord } from "@bridgeworks/protocol";

// How board records read in the terminal, one line each.

export function describeRecord(record: ActionRecord): string {
  const firstLine = record.body.split("\n")[0] ?? "";
  const holder = record.state === "open" ? "" : ` (${describeHolder(record)})`;
  return `${record.id} ${record.state}${holder} ${record.kind} ${record.from} -> ${record.to}: ${firstLine}`;
}

export function describeHolder(record: ActionRecord): string {
  switch (record.state) {
    case "open":
      return "open";
    case "claimed":
      return `claimed by ${record.claimedBy}`;
    case "done":
      return `done by ${record.claimedBy}`;
    case "cancelled":
      return `cancelled by ${record.cancelledBy}`;
  }
}

export function describeAgent(agent: AgentRecord): string {
  switch (agent.status) {
    case "active":
      return `${agent.identity} active since ${agent.registeredAt}`;
    case "retired":
      return `${agent.identity} retired ${agent.endedAt} (successor ${agent.successor})`;
    case "departed":
      return `${agent.identity} departed ${agent.endedAt}`;
  }
}
