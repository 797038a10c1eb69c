import { ActionRecord, AgentRecord } from "@bridgeworks/protocol";

export interface ActionRow {
  id: string;
  seq: number;
  kind: string;
  recipient: string;
  sender: string;
  sender_agent: string | null;
  body: string;
  state: string;
  claimed_by: string | null;
  claimed_at: number | null;
  /** How many times the action was claimed; the current claim's fencing token. */
  fence: number;
  cancelled_by: string | null;
  result: string | null;
  created_at: number;
  closed_at: number | null;
  /** An approval's deciders (a store keeps them as JSON text or an array); null for other actions. */
  deciders: string[] | string | null;
  decision: string | null;
  decided_by: string | null;
}

export interface AgentRow {
  identity: string;
  name: string;
  status: string;
  registered_at: number;
  ended_at: number | null;
  successor: string | null;
  /** The board's clock, epoch ms; null for an identity without a lease. */
  lease_expires_at: number | null;
  host: string | null;
  pid: number | null;
}

/** Rows pass through the protocol schema, so a record leaves the board valid or not at all. */
export function actionFromRow(row: ActionRow): ActionRecord {
  const held = row.claimed_by !== null;
  return ActionRecord.parse(
    withoutAbsent({
      id: row.id,
      seq: row.seq,
      kind: row.kind,
      to: row.recipient,
      from: row.sender,
      body: row.body,
      state: row.state,
      createdAt: isoTime(row.created_at),
      deciders: decidersOf(row.deciders),
      claimedBy: row.claimed_by,
      claimedAt: isoTime(row.claimed_at),
      fence: held ? row.fence : null,
      cancelledBy: row.cancelled_by,
      decision: row.decision,
      decidedBy: row.decided_by,
      result: row.result,
      closedAt: isoTime(row.closed_at),
    }),
  );
}

export function agentFromRow(row: AgentRow): AgentRecord {
  return AgentRecord.parse(
    withoutAbsent({
      identity: row.identity,
      name: row.name,
      status: row.status,
      registeredAt: isoTime(row.registered_at),
      process: row.host === null || row.pid === null ? null : { host: row.host, pid: row.pid },
      leaseExpiresAt: row.status === "active" ? isoTime(row.lease_expires_at) : null,
      endedAt: isoTime(row.ended_at),
      successor: row.successor,
    }),
  );
}

function decidersOf(value: string[] | string | null): string[] | null {
  if (value === null || Array.isArray(value)) return value;
  return JSON.parse(value) as string[];
}

function isoTime(epochMs: number | null): string | null {
  return epochMs === null ? null : new Date(epochMs).toISOString();
}

function withoutAbsent(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null));
}
