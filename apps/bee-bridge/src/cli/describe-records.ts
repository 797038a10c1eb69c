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
      return `claimed by ${record.claimedBy}, fence ${record.fence}`;
    case "done":
      return `done by ${record.claimedBy}`;
    case "cancelled":
      return `cancelled by ${record.cancelledBy}`;
    case "decided":
      return `${record.decision === "allow" ? "allowed" : "denied"} by ${record.decidedBy}`;
  }
}

export function describeAgent(agent: AgentRecord): string {
  const where = agent.process === undefined ? "" : ` (pid ${agent.process.pid} on ${agent.process.host})`;
  switch (agent.status) {
    case "active":
      return `${agent.identity} active since ${agent.registeredAt}${
        agent.leaseExpiresAt === undefined ? "" : `, lease until ${agent.leaseExpiresAt}`
      }${where}`;
    case "retired":
      return `${agent.identity} retired ${agent.endedAt} (successor ${agent.successor})`;
    case "departed":
      return `${agent.identity} departed ${agent.endedAt}`;
    case "expired":
      return `${agent.identity} expired ${agent.endedAt}: its lease lapsed${where}`;
  }
}
