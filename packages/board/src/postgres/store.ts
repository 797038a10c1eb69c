import type pg from "pg";
import type { ActionRow, AgentRow } from "../rows.js";
import type { CancelRequest, ClaimableScanRows, EndAgentRequest, NewAction, Store } from "../store.js";

type Queryable = Pick<pg.ClientBase, "query">;

/**
 * The SQL of the board, one statement per question; no decisions live here. Every change takes the
 * next board position. Writers first lock the board row (`lockBoard`), so positions are assigned in
 * commit order and a reader never sees a lower one commit later.
 */
export class PostgresStore implements Store {
  readonly #db: Queryable;
  readonly #schema: string;
  readonly #head: string;
  readonly #nextSeq: string;

  /** `schema` is a validated identifier (see `parseSchemaName`), so it is safe to splice into SQL. */
  constructor(db: Queryable, schema: string) {
    this.#db = db;
    this.#schema = schema;
    this.#head = `(SELECT coalesce(max(seq), 0) FROM ${schema}.actions)`;
    this.#nextSeq = `(SELECT coalesce(max(seq), 0) + 1 FROM ${schema}.actions)`;
  }

  async boardId(): Promise<string> {
    const row = await this.#one<{ id: string }>(`SELECT id FROM ${this.#schema}.board`);
    if (row === undefined) throw new Error("the board database has no board id; its schema is damaged");
    return row.id;
  }

  async head(): Promise<number> {
    return (await this.#one<{ head: number }>(`SELECT ${this.#head} AS head`))?.head ?? 0;
  }

  /**
   * Begins a write transaction holding the board's write lock until it ends: writers queue here,
   * so each one's statements run on fresh snapshots that include every earlier write. One round trip.
   */
  async beginWrite(): Promise<void> {
    await this.#db.query(`BEGIN; SELECT 1 FROM ${this.#schema}.board FOR UPDATE`);
  }

  /**
   * Commits; with `channel`, NOTIFYs it in the same transaction with the new head, which it returns.
   * One round trip, so the lock is held as briefly as the write allows. `channel` is an identifier
   * built from the validated schema name.
   */
  async commitWrite(channel: string | undefined): Promise<number | undefined> {
    if (channel === undefined) {
      await this.#db.query("COMMIT");
      return undefined;
    }
    const results = (await this.#db.query(
      `SELECT head, pg_notify('${channel}', head::text) FROM (SELECT ${this.#head} AS head) AS latest; COMMIT`,
    )) as unknown as pg.QueryResult<{ head: number }>[];
    return results[0]?.rows[0]?.head ?? 0;
  }

  async insertAction(action: NewAction): Promise<ActionRow | undefined> {
    return this.#one<ActionRow>(
      `INSERT INTO ${this.#schema}.actions (id, seq, kind, recipient, sender, sender_agent, body, state, created_at)
       VALUES ($1, ${this.#nextSeq}, $2, $3, $4, $5, $6, 'open', $7)
       ON CONFLICT (id) DO NOTHING
       RETURNING *`,
      [action.id, action.kind, action.recipient, action.sender, action.senderAgent, action.body, action.now],
    );
  }

  async action(id: string): Promise<ActionRow | undefined> {
    return this.#one<ActionRow>(`SELECT * FROM ${this.#schema}.actions WHERE id = $1`, [id]);
  }

  async actionsAfter(after: number, limit: number): Promise<ActionRow[]> {
    return this.#all<ActionRow>(
      `SELECT * FROM ${this.#schema}.actions WHERE seq > $1 ORDER BY seq LIMIT $2`,
      [after, limit],
    );
  }

  /** The rows and the head from one statement, so one snapshot: the head never runs ahead of the scan. */
  async claimableAfter(name: string, after: number, limit: number): Promise<ClaimableScanRows> {
    const rows = await this.#all<ActionRow & { board_head: number }>(
      `SELECT latest.board_head, found.*
       FROM (SELECT ${this.#head} AS board_head) AS latest
       LEFT JOIN LATERAL (
         SELECT * FROM ${this.#schema}.actions
         WHERE state = 'open' AND recipient IN ($1, '*') AND seq > $2
         ORDER BY seq LIMIT $3
       ) AS found ON true
       ORDER BY found.seq`,
      [name, after, limit],
    );
    const boardHead = rows[0]?.board_head ?? 0;
    const actions = rows
      .filter((row) => row.id !== null)
      .map(({ board_head: _, ...row }) => row as ActionRow);
    return { rows: actions, head: boardHead };
  }

  async claim(id: string, agent: string, name: string, now: number): Promise<ActionRow | undefined> {
    return this.#one<ActionRow>(
      `UPDATE ${this.#schema}.actions
       SET state = 'claimed', claimed_by = $2, claimed_at = $4, seq = ${this.#nextSeq}
       WHERE id = $1 AND state = 'open' AND recipient IN ($3, '*')
         AND EXISTS (SELECT 1 FROM ${this.#schema}.agents WHERE identity = $2 AND status = 'active')
       RETURNING *`,
      [id, agent, name, now],
    );
  }

  async complete(
    id: string,
    agent: string,
    result: string | null,
    now: number,
  ): Promise<ActionRow | undefined> {
    return this.#one<ActionRow>(
      `UPDATE ${this.#schema}.actions
       SET state = 'done', result = $3, closed_at = $4, seq = ${this.#nextSeq}
       WHERE id = $1 AND state = 'claimed' AND claimed_by = $2
       RETURNING *`,
      [id, agent, result, now],
    );
  }

  async cancel(input: CancelRequest): Promise<ActionRow | undefined> {
    return this.#one<ActionRow>(
      `UPDATE ${this.#schema}.actions
       SET state = 'cancelled', cancelled_by = $2, result = $4, closed_at = $5, seq = ${this.#nextSeq}
       WHERE id = $1 AND state IN ('open', 'claimed')
         AND ($3::text IS NULL OR (sender_agent = $3::text
           AND EXISTS (SELECT 1 FROM ${this.#schema}.agents WHERE identity = $2 AND status = 'active')))
       RETURNING *`,
      [input.id, input.by, input.byAgent, input.reason, input.now],
    );
  }

  async insertAgent(identity: string, name: string, now: number): Promise<AgentRow | undefined> {
    return this.#one<AgentRow>(
      `INSERT INTO ${this.#schema}.agents (identity, name, status, registered_at) VALUES ($1, $2, 'active', $3)
       ON CONFLICT (identity) DO NOTHING
       RETURNING ${agentColumns}`,
      [identity, name, now],
    );
  }

  async agent(identity: string): Promise<AgentRow | undefined> {
    return this.#one<AgentRow>(`SELECT ${agentColumns} FROM ${this.#schema}.agents WHERE identity = $1`, [
      identity,
    ]);
  }

  async agents(): Promise<AgentRow[]> {
    return this.#all<AgentRow>(`SELECT ${agentColumns} FROM ${this.#schema}.agents ORDER BY position`);
  }

  /** Call inside a write transaction. */
  async endAgent(input: EndAgentRequest): Promise<{ agent: AgentRow; released: string[] } | undefined> {
    const agent = await this.#one<AgentRow>(
      `UPDATE ${this.#schema}.agents SET status = $2, ended_at = $3, successor = $4
       WHERE identity = $1 AND status = 'active' RETURNING ${agentColumns}`,
      [input.identity, input.status, input.now, input.successor],
    );
    if (agent === undefined) return undefined;
    const claims = await this.#all<{ id: string }>(
      `SELECT id FROM ${this.#schema}.actions WHERE state = 'claimed' AND claimed_by = $1 ORDER BY seq`,
      [input.identity],
    );
    const released: string[] = [];
    for (const { id } of claims) {
      const row = await this.#one<{ id: string }>(
        `UPDATE ${this.#schema}.actions SET state = 'open', claimed_by = NULL, claimed_at = NULL, seq = ${this.#nextSeq}
         WHERE id = $1 AND state = 'claimed' RETURNING id`,
        [id],
      );
      if (row !== undefined) released.push(row.id);
    }
    return { agent, released };
  }

  async #one<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T | undefined> {
    return (await this.#db.query<T>(text, values)).rows[0];
  }

  async #all<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
    return (await this.#db.query<T>(text, values)).rows;
  }
}

const agentColumns = "identity, name, status, registered_at, ended_at, successor";
