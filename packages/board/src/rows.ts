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
  cancelled_by: string | null;
  result: string | null;
  created_at: number;
  closed_at: number | null;
}

export interface AgentRow {
  identity: string;
  name: string;
  status: string;
  registered_at: number;
  ended_at: number | null;
  successor: string | null;
}

/** Rows pass through the protocol schema, so a record leaves the board valid or not at all. */
export function actionFromRow(row: ActionRow): ActionRecord {
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
      claimedBy: row.claimed_by,
      claimedAt: isoTime(row.claimed_at),
      cancelledBy: row.cancelled_by,
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
      endedAt: isoTime(row.ended_at),
      successor: row.successor,
    }),
  );
}

function isoTime(epochMs: number | null): string | null {
  return epochMs === null ? null : new Date(epochMs).toISOString();
}

function withoutAbsent(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null));
}
