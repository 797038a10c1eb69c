import type Database from "better-sqlite3";
import type { ActionRow, AgentRow } from "../rows.js";
import type {
  CancelRequest,
  EndAgentRequest,
  Lookup,
  LookupRequest,
  NewAction,
  ScanRows,
  Store,
} from "../store.js";

// Every change takes the next board position. Writers are serialized by SQLite's write lock, so
// positions are assigned in commit order and a reader never sees a lower one commit later.
const nextSeq = "(SELECT coalesce(max(seq), 0) + 1 FROM actions)";

/** The SQL of the board, one prepared statement per question, answered at once; no decisions live here. */
export class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #statements: ReturnType<typeof prepareStatements>;
  #madeClaimable = false;

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
   * Whether a write since the last call made an action claimable (a post or a release), the only
   * changes waiters wait for; clears it.
   */
  takeClaimableChange(): boolean {
    const made = this.#madeClaimable;
    this.#madeClaimable = false;
    return made;
  }

  insertAction(action: NewAction): ActionRow | undefined {
    const inserted = this.#statements.insertAction.get(action);
    if (inserted !== undefined) this.#madeClaimable = true;
    return inserted;
  }

  action(id: string): ActionRow | undefined {
    return this.#statements.action.get(id);
  }

  lookup(request: LookupRequest): Lookup {
    return this.#read(() => ({
      action: request.action === undefined ? undefined : this.#statements.action.get(request.action),
      agent: request.agent === undefined ? undefined : this.#statements.agent.get(request.agent),
      head: this.head(),
    }));
  }

  /** Both reads in one snapshot, so the head never runs ahead of what the scan saw. */
  actionsAfter(after: number, limit: number): ScanRows {
    return this.#read(() => ({ rows: this.#statements.actionsAfter.all(after, limit), head: this.head() }));
  }

  /** Both reads in one snapshot, so the head never runs ahead of what the scan saw. */
  claimableAfter(name: string, after: number, limit: number): ScanRows {
    return this.#read(() => ({
      rows: this.#statements.claimableAfter.all(name, after, limit),
      head: this.head(),
    }));
  }

  claim(id: string, agent: string, name: string, now: number): ActionRow | undefined {
    return this.#statements.claim.get({ id, agent, name, now });
  }

  claimNext(agent: string, name: string, now: number): ActionRow | undefined {
    return this.#statements.claimNext.get({ agent, name, now });
  }

  complete(id: string, agent: string, result: string | null, now: number): ActionRow | undefined {
    return this.#statements.complete.get({ id, agent, result, now });
  }

  cancel(request: CancelRequest): ActionRow | undefined {
    return this.#statements.cancel.get(request);
  }

  insertAgent(identity: string, name: string, now: number): AgentRow | undefined {
    return this.#statements.insertAgent.get({ identity, name, now });
  }

  agents(): AgentRow[] {
    return this.#statements.agents.all();
  }

  /** One write transaction: all or nothing. */
  endAgent(input: EndAgentRequest): { agent: AgentRow; released: string[] } | undefined {
    return this.#db
      .transaction(() => {
        const agent = this.#statements.endAgent.get(input);
        if (agent === undefined) return undefined;
        const released = this.#statements.claimsOf
          .all(input.identity)
          .map(({ id }) => this.#statements.release.get(id)?.id)
          .filter((id): id is string => id !== undefined);
        if (released.length > 0) this.#madeClaimable = true;
        return { agent, released };
      })
      .immediate();
  }

  #read<T>(read: () => T): T {
    return this.#db.transaction(read).deferred();
  }
}

function prepareStatements(db: Database.Database) {
  return {
    boardId: db.prepare<[], { id: string }>("SELECT id FROM board"),
    head: db.prepare<[], { head: number }>("SELECT coalesce(max(seq), 0) AS head FROM actions"),
    // The WHERE also keeps SQLite from reading ON CONFLICT as a join constraint of the SELECT.
    insertAction: db.prepare<NewAction, ActionRow>(
      `INSERT INTO actions (id, seq, kind, recipient, sender, sender_agent, body, state, created_at)
     SELECT @id, ${nextSeq}, @kind, @recipient, @sender, @senderAgent, @body, 'open', @now
     WHERE @senderAgent IS NULL
       OR EXISTS (SELECT 1 FROM agents WHERE identity = @sender AND status = 'active')
     ON CONFLICT (id) DO NOTHING
     RETURNING *`,
    ),
    action: db.prepare<[string], ActionRow>("SELECT * FROM actions WHERE id = ?"),
    actionsAfter: db.prepare<[number, number], ActionRow>(
      "SELECT * FROM actions WHERE seq > ? ORDER BY seq LIMIT ?",
    ),
    claimableAfter: db.prepare<[string, number, number], ActionRow>(
      `SELECT * FROM actions
     WHERE state = 'open' AND recipient IN (?, '*') AND seq > ?
     ORDER BY seq LIMIT ?`,
    ),
    claim: db.prepare<{ id: string; agent: string; name: string; now: number }, ActionRow>(
      `UPDATE actions
     SET state = 'claimed', claimed_by = @agent, claimed_at = @now, seq = ${nextSeq}
     WHERE id = @id AND state = 'open' AND recipient IN (@name, '*')
       AND EXISTS (SELECT 1 FROM agents WHERE identity = @agent AND status = 'active')
     RETURNING *`,
    ),
    claimNext: db.prepare<{ agent: string; name: string; now: number }, ActionRow>(
      `UPDATE actions
     SET state = 'claimed', claimed_by = @agent, claimed_at = @now, seq = ${nextSeq}
     WHERE id = (
         -- Two index probes (one per recipient), not a sort of every open action.
         SELECT id FROM (
           SELECT id, seq FROM (
             SELECT id, seq FROM actions WHERE state = 'open' AND recipient = @name ORDER BY seq LIMIT 1
           )
           UNION ALL
           SELECT id, seq FROM (
             SELECT id, seq FROM actions WHERE state = 'open' AND recipient = '*' ORDER BY seq LIMIT 1
           )
         )
         ORDER BY seq LIMIT 1
       )
       AND EXISTS (SELECT 1 FROM agents WHERE identity = @agent AND status = 'active')
     RETURNING *`,
    ),
    complete: db.prepare<{ id: string; agent: string; result: string | null; now: number }, ActionRow>(
      `UPDATE actions
     SET state = 'done', result = @result, closed_at = @now, seq = ${nextSeq}
     WHERE id = @id AND state = 'claimed' AND claimed_by = @agent
     RETURNING *`,
    ),
    cancel: db.prepare<CancelRequest, ActionRow>(
      `UPDATE actions
     SET state = 'cancelled', cancelled_by = @by, result = @reason, closed_at = @now, seq = ${nextSeq}
     WHERE id = @id AND state IN ('open', 'claimed')
       AND (@byAgent IS NULL OR (sender_agent = @byAgent
         AND EXISTS (SELECT 1 FROM agents WHERE identity = @by AND status = 'active')))
     RETURNING *`,
    ),
    claimsOf: db.prepare<[string], { id: string }>(
      "SELECT id FROM actions WHERE state = 'claimed' AND claimed_by = ? ORDER BY seq",
    ),
    release: db.prepare<[string], ActionRow>(
      `UPDATE actions SET state = 'open', claimed_by = NULL, claimed_at = NULL, seq = ${nextSeq}
     WHERE id = ? AND state = 'claimed' RETURNING *`,
    ),
    insertAgent: db.prepare<{ identity: string; name: string; now: number }, AgentRow>(
      `INSERT INTO agents (identity, name, status, registered_at) VALUES (@identity, @name, 'active', @now)
     ON CONFLICT (identity) DO NOTHING
     RETURNING *`,
    ),
    agent: db.prepare<[string], AgentRow>("SELECT * FROM agents WHERE identity = ?"),
    agents: db.prepare<[], AgentRow>("SELECT * FROM agents ORDER BY registered_at, rowid"),
    endAgent: db.prepare<EndAgentRequest, AgentRow>(
      `UPDATE agents SET status = @status, ended_at = @now, successor = @successor
     WHERE identity = @identity AND status = 'active' RETURNING *`,
    ),
  };
}
