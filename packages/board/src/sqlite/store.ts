import type Database from "better-sqlite3";
import type { ActionRow, AgentRow } from "../rows.js";
import type {
  CancelRequest,
  CompleteRequest,
  DecideRequest,
  EndAgentRequest,
  Lookup,
  LookupRequest,
  NewAction,
  NewAgent,
  Released,
  ScanRows,
  Store,
  StoreSettings,
} from "../store.js";

/** What a write transaction changed, for the wake-ups after it commits. */
export type SqliteChange = "none" | "other" | "claimable";

/** The SQL of the board, one prepared statement per question, answered at once; no decisions live here. */
export class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #statements: ReturnType<typeof prepareStatements>;
  #change: SqliteChange = "none";

  constructor(db: Database.Database) {
    this.#db = db;
    this.#statements = prepareStatements(db);
  }

  boardId(): string {
    const row = this.#statements.boardId.get();
    if (row === undefined) throw new Error("the board file has no board id; its schema is damaged");
    return row.id;
  }

  head(): number {
    return this.#statements.head.get()?.head ?? 0;
  }

  /**
   * What the writes since the last call changed: `claimable` when one made an action claimable (a
   * post or a release, the only changes most waiters wait for), `other` for any other change; clears it.
   */
  takeChange(): SqliteChange {
    const change = this.#change;
    this.#change = "none";
    return change;
  }

  #changed(change: "other" | "claimable"): void {
    if (change === "claimable" || this.#change === "none") this.#change = change;
  }

  insertAction(action: NewAction): ActionRow | undefined {
    const inserted = this.#statements.insertAction.get({
      ...action,
      deciders: action.deciders === null ? null : JSON.stringify(action.deciders),
    });
    if (inserted !== undefined) this.#changed("claimable");
    return inserted;
  }

  action(id: string): ActionRow | undefined {
    return this.#statements.action.get(id);
  }

  lookup(request: LookupRequest): Lookup {
    return this.#read(() => {
      const agent = request.agent === undefined ? undefined : this.#statements.agent.get(request.agent);
      return {
        action: request.action === undefined ? undefined : this.#statements.action.get(request.action),
        agent,
        agentLeaseExpiresInMs:
          agent === undefined
            ? undefined
            : (this.#statements.leaseExpiresIn.get(agent.identity)?.expires_in_ms ?? undefined),
        head: this.head(),
      };
    });
  }

  /** Both reads in one snapshot, so the head never runs ahead of what the scan saw. */
  actionsAfter(after: number, limit: number): ScanRows {
    return this.#read(() => this.#scan(this.#statements.actionsAfter.all(after, limit)));
  }

  /** Both reads in one snapshot, so the head never runs ahead of what the scan saw. */
  claimableAfter(name: string, after: number, limit: number): ScanRows {
    return this.#read(() => this.#scan(this.#statements.claimableAfter.all({ name, after, limit })));
  }

  claim(id: string, agent: string, name: string, now: number): ActionRow | undefined {
    this.expireLeases(now);
    return this.#other(this.#statements.claim.get({ id, agent, name, now }));
  }

  claimNext(agent: string, name: string, now: number): ActionRow | undefined {
    this.expireLeases(now);
    return this.#other(this.#statements.claimNext.get({ agent, name, now }));
  }

  complete(request: CompleteRequest): ActionRow | undefined {
    return this.#other(this.#statements.complete.get(request));
  }

  cancel(request: CancelRequest): ActionRow | undefined {
    return this.#other(this.#statements.cancel.get(request));
  }

  decide(request: DecideRequest): ActionRow | undefined {
    return this.#other(this.#statements.decide.get({ ...request, byHuman: request.byHuman ? 1 : 0 }));
  }

  insertAgent(agent: NewAgent): AgentRow | undefined {
    const inserted = this.#statements.insertAgent.get({ ...agent, leased: agent.leased ? 1 : 0 });
    if (inserted !== undefined) this.#agentsChanged();
    return inserted;
  }

  renewLease(identity: string): AgentRow | undefined {
    return this.#statements.renewLease.get(identity);
  }

  agents(): AgentRow[] {
    return this.#statements.agents.all();
  }

  endAgent(input: EndAgentRequest): ({ agent: AgentRow } & Released) | undefined {
    const agent = this.#statements.endAgent.get(input);
    if (agent === undefined) return undefined;
    this.#agentsChanged();
    return { agent, released: this.#release(input.identity, input.now) };
  }

  /** Every lapsed identity, in registration order, each as its own end; inside the caller's transaction. */
  expireLeases(now: number): { expired: string[] } & Released {
    const expired: string[] = [];
    const released: string[] = [];
    for (const { identity } of this.#statements.lapsed.all()) {
      if (this.#statements.expireAgent.get({ identity, now }) === undefined) continue;
      this.#agentsChanged();
      expired.push(identity);
      released.push(...this.#release(identity, now));
    }
    return { expired, released };
  }

  settings(): StoreSettings {
    const row = this.#statements.settings.get();
    if (row === undefined) throw new Error("the board file has no settings row; its schema is damaged");
    return row;
  }

  setLeaseTtl(leaseTtlMs: number): StoreSettings {
    this.#statements.setLeaseTtl.run(leaseTtlMs);
    this.#changed("other");
    return this.settings();
  }

  /**
   * Returns the identity's claims to open, each at the next position in their old order, and
   * withdraws the approvals it asked for. One row at a time: each takes its own next position.
   */
  #release(identity: string, now: number): string[] {
    const released = this.#statements.claimsOf
      .all(identity)
      .map(({ id }) => this.#statements.release.get(id)?.id)
      .filter((id): id is string => id !== undefined);
    if (released.length > 0) this.#changed("claimable");
    for (const { id } of this.#statements.approvalsOf.all(identity)) {
      const reason = `withdrawn: ${identity}, which asked for it, ended`;
      if (this.#statements.withdraw.get({ id, identity, reason, now }) !== undefined) this.#changed("other");
    }
    return released;
  }

  #agentsChanged(): void {
    this.#statements.bumpAgentsVersion.run();
    this.#changed("other");
  }

  #other(row: ActionRow | undefined): ActionRow | undefined {
    if (row !== undefined) this.#changed("other");
    return row;
  }

  #scan(rows: ActionRow[]): ScanRows {
    const leases = this.#statements.leases.get();
    return {
      rows,
      head: this.head(),
      leaseExpiresInMs: leases?.expires_in_ms ?? undefined,
      agentsVersion: leases?.agents_version ?? 0,
    };
  }

  #read<T>(read: () => T): T {
    return this.#db.transaction(read).deferred();
  }
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
function prepareStatements(db: Database.Database) {
  const claimFor = `SET state = 'claimed', claimed_by = @agent, claimed_at = @now, fence = fence + 1, seq = ${nextSeq}`;
  return {
    boardId: db.prepare<[], { id: string }>("SELECT id FROM board"),
    settings: db.prepare<[], StoreSettings>("SELECT lease_ttl_ms FROM board"),
    setLeaseTtl: db.prepare<[number]>("UPDATE board SET lease_ttl_ms = ?"),
    bumpAgentsVersion: db.prepare("UPDATE board SET agents_version = agents_version + 1"),
    head: db.prepare<[], { head: number }>("SELECT coalesce(max(seq), 0) AS head FROM actions"),
    leases: db.prepare<[], { expires_in_ms: number | null; agents_version: number }>(
      `SELECT (SELECT min(lease_expires_at) FROM agents WHERE status = 'active') - ${storeNow} AS expires_in_ms,
       agents_version FROM board`,
    ),
    leaseExpiresIn: db.prepare<[string], { expires_in_ms: number | null }>(
      `SELECT lease_expires_at - ${storeNow} AS expires_in_ms FROM agents WHERE identity = ?`,
    ),
    // The WHERE also keeps SQLite from reading ON CONFLICT as a join constraint of the SELECT.
    insertAction: db.prepare<NewActionInput, ActionRow>(
      `INSERT INTO actions (id, seq, kind, recipient, sender, sender_agent, body, state, created_at, deciders)
     SELECT @id, ${nextSeq}, @kind, @recipient, @sender, @senderAgent, @body, 'open', @now, @deciders
     WHERE @senderAgent IS NULL OR ${live("@sender")}
     ON CONFLICT (id) DO NOTHING
     RETURNING *`,
    ),
    action: db.prepare<[string], ActionRow>("SELECT * FROM actions WHERE id = ?"),
    actionsAfter: db.prepare<[number, number], ActionRow>(
      "SELECT * FROM actions WHERE seq > ? ORDER BY seq LIMIT ?",
    ),
    // An approval reaches only the one it is addressed to, never everyone.
    claimableAfter: db.prepare<{ name: string; after: number; limit: number }, ActionRow>(
      `SELECT * FROM actions
     WHERE state = 'open' AND seq > @after
       AND (recipient = @name OR (recipient = '*' AND kind <> 'approval'))
     ORDER BY seq LIMIT @limit`,
    ),
    claim: db.prepare<ClaimInput, ActionRow>(
      `UPDATE actions ${claimFor}
     WHERE id = @id AND state = 'open' AND kind <> 'approval' AND recipient IN (@name, '*')
       AND ${live("@agent")}
     RETURNING *`,
    ),
    claimNext: db.prepare<Omit<ClaimInput, "id">, ActionRow>(
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
    complete: db.prepare<CompleteRequest, ActionRow>(
      `UPDATE actions
     SET state = 'done', result = @result, closed_at = @now, seq = ${nextSeq}
     WHERE id = @id AND state = 'claimed' AND claimed_by = @agent AND (@fence IS NULL OR fence = @fence)
       AND ${live("@agent")}
     RETURNING *`,
    ),
    cancel: db.prepare<CancelRequest, ActionRow>(
      `UPDATE actions
     SET state = 'cancelled', cancelled_by = @by, result = @reason, closed_at = @now, seq = ${nextSeq}
     WHERE id = @id AND state IN ('open', 'claimed')
       AND (@byAgent IS NULL OR (sender_agent = @byAgent AND ${live("@by")}))
     RETURNING *`,
    ),
    // `human` admits every person; an agent matches only its own name, never the word human.
    decide: db.prepare<DecideInput, ActionRow>(
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
    claimsOf: db.prepare<[string], { id: string }>(
      "SELECT id FROM actions WHERE state = 'claimed' AND claimed_by = ? ORDER BY seq",
    ),
    release: db.prepare<[string], ActionRow>(
      `UPDATE actions SET state = 'open', claimed_by = NULL, claimed_at = NULL, seq = ${nextSeq}
     WHERE id = ? AND state = 'claimed' RETURNING *`,
    ),
    approvalsOf: db.prepare<[string], { id: string }>(
      "SELECT id FROM actions WHERE state = 'open' AND kind = 'approval' AND sender = ? ORDER BY seq",
    ),
    withdraw: db.prepare<{ id: string; identity: string; reason: string; now: number }, { id: string }>(
      `UPDATE actions
     SET state = 'cancelled', cancelled_by = @identity, result = @reason, closed_at = @now, seq = ${nextSeq}
     WHERE id = @id AND state = 'open' RETURNING id`,
    ),
    insertAgent: db.prepare<NewAgentInput, AgentRow>(
      `INSERT INTO agents (identity, name, status, registered_at, lease_expires_at, host, pid)
     VALUES (@identity, @name, 'active', @now,
       CASE WHEN @leased = 1 THEN ${storeNow} + ${leaseTtl} END, @host, @pid)
     ON CONFLICT (identity) DO NOTHING
     RETURNING *`,
    ),
    renewLease: db.prepare<[string], AgentRow>(
      `UPDATE agents SET lease_expires_at = ${storeNow} + ${leaseTtl}
     WHERE identity = ? AND status = 'active' AND lease_expires_at > ${storeNow} RETURNING *`,
    ),
    agent: db.prepare<[string], AgentRow>("SELECT * FROM agents WHERE identity = ?"),
    agents: db.prepare<[], AgentRow>("SELECT * FROM agents ORDER BY registered_at, rowid"),
    endAgent: db.prepare<EndAgentRequest, AgentRow>(
      `UPDATE agents SET status = @status, ended_at = @now, successor = @successor
     WHERE identity = @identity AND status = 'active' RETURNING *`,
    ),
    lapsed: db.prepare<[], { identity: string }>(
      `SELECT identity FROM agents WHERE status = 'active' AND lease_expires_at <= ${storeNow}
     ORDER BY registered_at, rowid`,
    ),
    expireAgent: db.prepare<{ identity: string; now: number }, AgentRow>(
      `UPDATE agents SET status = 'expired', ended_at = @now
     WHERE identity = @identity AND status = 'active' AND lease_expires_at <= ${storeNow} RETURNING *`,
    ),
  };
}
