import type { Database } from "better-sqlite3";
import type { ActionRow, AgentRow } from "../rows.js";
import type {
  CancelRequest,
  CompleteRequest,
  DecideRequest,
  EndAgentRequest,
  NewAction,
  NewAgent,
  StoreSettings,
} from "../store.js";

export type SqliteStatements = ReturnType<typeof prepareStatements>;

/**
 * The part of a prepared statement the store uses: its arguments (positional ones, or one object of
 * named ones) and its row type. better-sqlite3's own `Statement` type cannot be named in declarations.
 */
export interface Query<Parameters extends unknown[], Row = unknown> {
  run(...parameters: Parameters): unknown;
  get(...parameters: Parameters): Row | undefined;
  all(...parameters: Parameters): Row[];
}

// Every change takes the next board position. Writers are serialized by SQLite's write lock, so
// positions are assigned in commit order and a reader never sees a lower one commit later.
const nextSeq = "(SELECT coalesce(max(seq), 0) + 1 FROM actions)";
/** The machine's clock in epoch ms, the clock of every lease on this board (one statement reads it once). */
const storeNow = "(CAST(unixepoch('subsec') * 1000 AS INTEGER))";
const leaseTtl = "(SELECT lease_ttl_ms FROM board)";
/** An identity counts as active while its status says so and its lease, if it has one, holds. */
const live = (identity: string) =>
  `EXISTS (SELECT 1 FROM agents WHERE identity = ${identity} AND status = 'active'
     AND (lease_expires_at IS NULL OR lease_expires_at > ${storeNow}))`;

interface ClaimInput {
  id: string;
  agent: string;
  name: string;
  now: number;
}

/** SQLite binds no booleans. */
type DecideInput = Omit<DecideRequest, "byHuman"> & { byHuman: 0 | 1 };

/** SQLite keeps an approval's deciders as JSON text. */
type NewActionInput = Omit<NewAction, "deciders"> & { deciders: string | null };

type NewAgentInput = Omit<NewAgent, "leased"> & { leased: 0 | 1 };

/** The SQL of the SQLite board, one prepared statement per question. */
export function prepareStatements(db: Database) {
  const query = <Parameters extends unknown[] = [], Row = unknown>(sql: string): Query<Parameters, Row> =>
    db.prepare<Parameters, Row>(sql);
  const claimFor = `SET state = 'claimed', claimed_by = @agent, claimed_at = @now, fence = fence + 1, seq = ${nextSeq}`;
  return {
    boardId: query<[], { id: string }>("SELECT id FROM board"),
    settings: query<[], StoreSettings>("SELECT lease_ttl_ms FROM board"),
    setLeaseTtl: query<[number]>("UPDATE board SET lease_ttl_ms = ?"),
    bumpAgentsVersion: query("UPDATE board SET agents_version = agents_version + 1"),
    head: query<[], { head: number }>("SELECT coalesce(max(seq), 0) AS head FROM actions"),
    leases: query<[], { expires_in_ms: number | null; agents_version: number }>(
      `SELECT (SELECT min(lease_expires_at) FROM agents WHERE status = 'active') - ${storeNow} AS expires_in_ms,
       agents_version FROM board`,
    ),
    leaseExpiresIn: query<[string], { expires_in_ms: number | null }>(
      `SELECT lease_expires_at - ${storeNow} AS expires_in_ms FROM agents WHERE identity = ?`,
    ),
    // The WHERE also keeps SQLite from reading ON CONFLICT as a join constraint of the SELECT.
    insertAction: query<[NewActionInput], ActionRow>(
      `INSERT INTO actions (id, seq, kind, recipient, sender, sender_agent, body, state, created_at, deciders)
     SELECT @id, ${nextSeq}, @kind, @recipient, @sender, @senderAgent, @body, 'open', @now, @deciders
     WHERE @senderAgent IS NULL OR ${live("@sender")}
     ON CONFLICT (id) DO NOTHING
     RETURNING *`,
    ),
    action: query<[string], ActionRow>("SELECT * FROM actions WHERE id = ?"),
    actionsAfter: query<[number, number], ActionRow>(
      "SELECT * FROM actions WHERE seq > ? ORDER BY seq LIMIT ?",
    ),
    // An approval reaches only the one it is addressed to, never everyone.
    claimableAfter: query<[{ name: string; after: number; limit: number }], ActionRow>(
      `SELECT * FROM actions
     WHERE state = 'open' AND seq > @after
       AND (recipient = @name OR (recipient = '*' AND kind <> 'approval'))
     ORDER BY seq LIMIT @limit`,
    ),
    claim: query<[ClaimInput], ActionRow>(
      `UPDATE actions ${claimFor}
     WHERE id = @id AND state = 'open' AND kind <> 'approval' AND recipient IN (@name, '*')
       AND ${live("@agent")}
     RETURNING *`,
    ),
    claimNext: query<[Omit<ClaimInput, "id">], ActionRow>(
      `UPDATE actions ${claimFor}
     WHERE id = (
         -- Two index probes (one per recipient), not a sort of every open action.
         SELECT id FROM (
           SELECT id, seq FROM (
             SELECT id, seq FROM actions
             WHERE state = 'open' AND recipient = @name AND kind <> 'approval' ORDER BY seq LIMIT 1
           )
           UNION ALL
           SELECT id, seq FROM (
             SELECT id, seq FROM actions
             WHERE state = 'open' AND recipient = '*' AND kind <> 'approval' ORDER BY seq LIMIT 1
           )
         )
         ORDER BY seq LIMIT 1
       )
       AND ${live("@agent")}
     RETURNING *`,
    ),
    complete: query<[CompleteRequest], ActionRow>(
      `UPDATE actions
     SET state = 'done', result = @result, closed_at = @now, seq = ${nextSeq}
     WHERE id = @id AND state = 'claimed' AND claimed_by = @agent AND (@fence IS NULL OR fence = @fence)
       AND ${live("@agent")}
     RETURNING *`,
    ),
    cancel: query<[CancelRequest], ActionRow>(
      `UPDATE actions
     SET state = 'cancelled', cancelled_by = @by, result = @reason, closed_at = @now, seq = ${nextSeq}
     WHERE id = @id AND state IN ('open', 'claimed')
       AND (@byAgent IS NULL OR (sender_agent = @byAgent AND ${live("@by")}))
     RETURNING *`,
    ),
    // `human` admits every person; an agent matches only its own name, never the word human.
    decide: query<[DecideInput], ActionRow>(
      `UPDATE actions
     SET state = 'decided', decision = @decision, decided_by = @by, result = @reason, closed_at = @now,
       seq = ${nextSeq}
     WHERE id = @id AND kind = 'approval' AND state = 'open'
       AND EXISTS (SELECT 1 FROM json_each(actions.deciders) AS d
         WHERE (@byHuman = 1 AND (d.value = @byName OR d.value = 'human'))
            OR (@byHuman = 0 AND d.value = @byName AND @byName <> 'human'))
       AND (@byHuman = 1 OR ${live("@by")})
     RETURNING *`,
    ),
    claimsOf: query<[string], { id: string }>(
      "SELECT id FROM actions WHERE state = 'claimed' AND claimed_by = ? ORDER BY seq",
    ),
    release: query<[string], ActionRow>(
      `UPDATE actions SET state = 'open', claimed_by = NULL, claimed_at = NULL, seq = ${nextSeq}
     WHERE id = ? AND state = 'claimed' RETURNING *`,
    ),
    approvalsOf: query<[string], { id: string }>(
      "SELECT id FROM actions WHERE state = 'open' AND kind = 'approval' AND sender = ? ORDER BY seq",
    ),
    withdraw: query<[{ id: string; identity: string; reason: string; now: number }], { id: string }>(
      `UPDATE actions
     SET state = 'cancelled', cancelled_by = @identity, result = @reason, closed_at = @now, seq = ${nextSeq}
     WHERE id = @id AND state = 'open' RETURNING id`,
    ),
    insertAgent: query<[NewAgentInput], AgentRow>(
      `INSERT INTO agents (identity, name, status, registered_at, lease_expires_at, host, pid)
     VALUES (@identity, @name, 'active', @now,
       CASE WHEN @leased = 1 THEN ${storeNow} + ${leaseTtl} END, @host, @pid)
     ON CONFLICT (identity) DO NOTHING
     RETURNING *`,
    ),
    renewLease: query<[string], AgentRow>(
      `UPDATE agents SET lease_expires_at = ${storeNow} + ${leaseTtl}
     WHERE identity = ? AND status = 'active' AND lease_expires_at > ${storeNow} RETURNING *`,
    ),
    agent: query<[string], AgentRow>("SELECT * FROM agents WHERE identity = ?"),
    agents: query<[], AgentRow>("SELECT * FROM agents ORDER BY registered_at, rowid"),
    endAgent: query<[EndAgentRequest], AgentRow>(
      `UPDATE agents SET status = @status, ended_at = @now, successor = @successor
     WHERE identity = @identity AND status = 'active' RETURNING *`,
    ),
    lapsed: query<[], { identity: string }>(
      `SELECT identity FROM agents WHERE status = 'active' AND lease_expires_at <= ${storeNow}
     ORDER BY registered_at, rowid`,
    ),
    expireAgent: query<[{ identity: string; now: number }], AgentRow>(
      `UPDATE agents SET status = 'expired', ended_at = @now
     WHERE identity = @identity AND status = 'active' AND lease_expires_at <= ${storeNow} RETURNING *`,
    ),
  };
}
