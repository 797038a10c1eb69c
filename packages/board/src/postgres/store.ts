import type pg from "pg";
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
import type { ChangeScope } from "../wait.js";
import { serverNowMs } from "./functions-v3.js";

/** What the store sends statements through: a pool for reads, one pipelined transaction for a write. */
export interface Queryable {
  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}

/**
 * Columns by name, never `*`: a prepared statement's result shape is fixed when it is parsed, so a
 * later migration that adds a column must not change what a running bee's statements return.
 */
const actionColumns =
  "id, seq, kind, recipient, sender, sender_agent, body, state, claimed_by, claimed_at, fence, cancelled_by, result, created_at, closed_at, deciders, decision, decided_by";
const agentColumns =
  "identity, name, status, registered_at, ended_at, successor, lease_expires_at, host, pid";
const lookupAgentColumns = agentColumns
  .split(", ")
  .map((column) => `g.${column} AS agent_${column}`)
  .join(", ");

function prefixed(alias: string, columns: string): string {
  return columns
    .split(", ")
    .map((column) => `${alias}.${column}`)
    .join(", ");
}

/** The SQL text of every statement, built once per schema; each is prepared under its own name. */
function statements(schema: string) {
  const actions = `${schema}.actions`;
  const agents = `${schema}.agents`;
  const head = `(SELECT coalesce(max(seq), 0) FROM ${actions})`;
  // A write is one call of its function (see schema.ts), so one statement and its own transaction.
  const call = (name: string, parameters: number, columns = actionColumns) =>
    `SELECT ${columns} FROM ${schema}.${name}(${Array.from({ length: parameters }, (_, index) => `$${index + 1}`).join(", ")})`;
  // One row, whatever exists: the rows and the head come from one statement, so one snapshot.
  const scan = (where: string) =>
    `SELECT latest.board_head, latest.lease_expires_in_ms, latest.agents_version, found.*
     FROM (SELECT ${head} AS board_head,
       (SELECT min(l.lease_expires_at) FROM ${agents} AS l WHERE l.status = 'active') - ${serverNowMs}
         AS lease_expires_in_ms,
       (SELECT b.agents_version FROM ${schema}.board AS b) AS agents_version) AS latest
     LEFT JOIN LATERAL (
       SELECT ${actionColumns} FROM ${actions} WHERE ${where} ORDER BY seq LIMIT $2
     ) AS found ON true
     ORDER BY found.seq`;
  return {
    boardId: `SELECT id FROM ${schema}.board`,
    insertAction: call("insert_action", 8),
    action: `SELECT ${actionColumns} FROM ${actions} WHERE id = $1`,
    lookup: `SELECT ${head} AS board_head, ${prefixed("a", actionColumns)}, ${lookupAgentColumns},
       g.lease_expires_at - ${serverNowMs} AS agent_lease_expires_in_ms
     FROM (VALUES (1)) AS one (x)
     LEFT JOIN ${actions} AS a ON a.id = $1::text
     LEFT JOIN ${agents} AS g ON g.identity = $2::text`,
    actionsAfter: scan("seq > $1"),
    // An approval reaches only the one it is addressed to, never everyone.
    claimableAfter: scan(
      "state = 'open' AND seq > $1 AND (recipient = $3 OR (recipient = '*' AND kind <> 'approval'))",
    ),
    claim: call("claim", 4),
    claimNext: call("claim_next", 3),
    complete: call("complete", 5),
    cancel: call("cancel", 5),
    decide: call("decide", 7),
    insertAgent: call("insert_agent", 6, agentColumns),
    renewLease: call("renew_lease", 1, agentColumns),
    agents: `SELECT ${agentColumns} FROM ${agents} ORDER BY position`,
    endAgent: `SELECT ${prefixed("(ended.agent)", agentColumns)}, ended.released
     FROM ${schema}.end_agent($1, $2, $3, $4) AS ended`,
    expireLeases: `SELECT expired, released FROM ${schema}.expire_leases($1)`,
    settings: `SELECT lease_ttl_ms FROM ${schema}.board`,
    setLeaseTtl: `SELECT ${schema}.set_lease_ttl($1) AS lease_ttl_ms`,
  };
}

type Statements = ReturnType<typeof statements>;
export type StatementName = keyof Statements;

/** The statements of one board, prepared per connection under names unique to the schema. */
export class PostgresStatements {
  readonly #text: Statements;
  readonly #prefix: string;

  /** `schema` is a validated identifier (see `parsePostgresLocation`), safe to splice into SQL. */
  constructor(schema: string) {
    this.#text = statements(schema);
    this.#prefix = `${schema}.`;
  }

  /** A named statement: PostgreSQL parses and plans it once per connection. */
  prepared(name: StatementName, values: unknown[]): pg.QueryConfig {
    return { name: this.#prefix + name, text: this.#text[name], values };
  }

  /** A statement sent as text: one-off. */
  text(name: "boardId"): string {
    return this.#text[name];
  }
}

/**
 * The SQL of the board, one statement per question; no decisions live here. Each write is a call of
 * its function (schema.ts), which takes the board's row lock first, so positions are assigned in
 * commit order and a reader never sees a lower one commit later.
 */
export class PostgresStore implements Store {
  readonly #db: Queryable;
  readonly #statements: PostgresStatements;
  #change: { scope: ChangeScope; head: number | undefined } | undefined;

  constructor(db: Queryable, statements: PostgresStatements) {
    this.#db = db;
    this.#statements = statements;
  }

  /**
   * What a write through this store changed (and NOTIFYed): `claimable` when it made an action
   * claimable, `every` for any other change, with the board's new head when known.
   */
  get change(): { scope: ChangeScope; head: number | undefined } | undefined {
    return this.#change;
  }

  #changed(scope: ChangeScope, head: number | undefined): void {
    if (this.#change?.scope === "claimable" && scope === "every") return;
    this.#change = { scope, head };
  }

  async boardId(): Promise<string> {
    const { rows } = await this.#db.query<{ id: string }>({ text: this.#statements.text("boardId") });
    const id = rows[0]?.id;
    if (id === undefined) throw new Error("the board database has no board id; its schema is damaged");
    return id;
  }

  async insertAction(action: NewAction): Promise<ActionRow | undefined> {
    const inserted = await this.#one<ActionRow>("insertAction", [
      action.id,
      action.kind,
      action.recipient,
      action.sender,
      action.senderAgent,
      action.body,
      action.deciders,
      action.now,
    ]);
    if (inserted !== undefined) this.#changed("claimable", inserted.seq);
    return inserted;
  }

  async action(id: string): Promise<ActionRow | undefined> {
    return this.#one<ActionRow>("action", [id]);
  }

  async lookup(request: LookupRequest): Promise<Lookup> {
    const [row] = await this.#all<LookupRow>("lookup", [request.action ?? null, request.agent ?? null]);
    if (row === undefined) throw new Error("the lookup returned no row");
    return {
      head: row.board_head,
      action: row.id === null ? undefined : actionOf(row),
      agent:
        row.agent_identity === null
          ? undefined
          : {
              identity: row.agent_identity,
              name: row.agent_name,
              status: row.agent_status,
              registered_at: row.agent_registered_at,
              ended_at: row.agent_ended_at,
              successor: row.agent_successor,
              lease_expires_at: row.agent_lease_expires_at,
              host: row.agent_host,
              pid: row.agent_pid,
            },
      agentLeaseExpiresInMs: row.agent_lease_expires_in_ms ?? undefined,
    };
  }

  actionsAfter(after: number, limit: number): Promise<ScanRows> {
    return this.#scan("actionsAfter", [after, limit]);
  }

  claimableAfter(name: string, after: number, limit: number): Promise<ScanRows> {
    return this.#scan("claimableAfter", [after, limit, name]);
  }

  claim(id: string, agent: string, name: string, now: number): Promise<ActionRow | undefined> {
    return this.#changedOne("claim", [id, agent, name, now]);
  }

  claimNext(agent: string, name: string, now: number): Promise<ActionRow | undefined> {
    return this.#changedOne("claimNext", [agent, name, now]);
  }

  complete(request: CompleteRequest): Promise<ActionRow | undefined> {
    const { id, agent, result, fence, now } = request;
    return this.#changedOne("complete", [id, agent, result, fence, now]);
  }

  cancel(input: CancelRequest): Promise<ActionRow | undefined> {
    return this.#changedOne("cancel", [input.id, input.by, input.byAgent, input.reason, input.now]);
  }

  decide(input: DecideRequest): Promise<ActionRow | undefined> {
    const { id, by, byName, byHuman, decision, reason, now } = input;
    return this.#changedOne("decide", [id, by, byName, byHuman, decision, reason, now]);
  }

  async insertAgent(agent: NewAgent): Promise<AgentRow | undefined> {
    const { identity, name, leased, host, pid, now } = agent;
    const inserted = await this.#one<AgentRow>("insertAgent", [identity, name, leased, host, pid, now]);
    if (inserted !== undefined) this.#changed("every", undefined);
    return inserted;
  }

  renewLease(identity: string): Promise<AgentRow | undefined> {
    return this.#one<AgentRow>("renewLease", [identity]);
  }

  async expireLeases(now: number): Promise<{ expired: string[] } & Released> {
    const [row] = await this.#all<{ expired: string[]; released: string[] }>("expireLeases", [now]);
    const swept = row ?? { expired: [], released: [] };
    if (swept.released.length > 0) this.#changed("claimable", undefined);
    else if (swept.expired.length > 0) this.#changed("every", undefined);
    return swept;
  }

  async settings(): Promise<StoreSettings> {
    const [row] = await this.#all<StoreSettings>("settings", []);
    if (row === undefined) throw new Error("the board database has no board row; its schema is damaged");
    return row;
  }

  async setLeaseTtl(leaseTtlMs: number): Promise<StoreSettings> {
    const [row] = await this.#all<StoreSettings>("setLeaseTtl", [leaseTtlMs]);
    if (row === undefined) throw new Error("the board database has no board row; its schema is damaged");
    return row;
  }

  agents(): Promise<AgentRow[]> {
    return this.#all<AgentRow>("agents", []);
  }

  async endAgent(input: EndAgentRequest): Promise<({ agent: AgentRow } & Released) | undefined> {
    const [row] = await this.#all<EndedRow>("endAgent", [
      input.identity,
      input.status,
      input.now,
      input.successor,
    ]);
    if (row === undefined) return undefined;
    const { released, ...agent } = row;
    this.#changed(released.length > 0 ? "claimable" : "every", undefined);
    return { agent, released };
  }

  async #changedOne(name: StatementName, values: unknown[]): Promise<ActionRow | undefined> {
    const row = await this.#one<ActionRow>(name, values);
    if (row !== undefined) this.#changed("every", row.seq);
    return row;
  }

  async #one<T extends pg.QueryResultRow>(name: StatementName, values: unknown[]): Promise<T | undefined> {
    return (await this.#all<T>(name, values))[0];
  }

  async #scan(name: "actionsAfter" | "claimableAfter", values: unknown[]): Promise<ScanRows> {
    const rows = await this.#all<ScanRow>(name, values);
    return {
      rows: rows
        .filter((row) => row.id !== null)
        .map(
          ({ board_head: _, lease_expires_in_ms: _lease, agents_version: _agents, ...row }) =>
            row as ActionRow,
        ),
      head: rows[0]?.board_head ?? 0,
      leaseExpiresInMs: rows[0]?.lease_expires_in_ms ?? undefined,
      agentsVersion: rows[0]?.agents_version ?? 0,
    };
  }

  async #all<T extends pg.QueryResultRow>(name: StatementName, values: unknown[]): Promise<T[]> {
    return (await this.#db.query<T>(this.#statements.prepared(name, values))).rows;
  }
}

type EndedRow = AgentRow & { released: string[] };

type ScanRow = {
  board_head: number;
  lease_expires_in_ms: number | null;
  agents_version: number;
} & { [K in keyof ActionRow]: ActionRow[K] | null };

type LookupRow = { board_head: number; agent_lease_expires_in_ms: number | null } & {
  [K in keyof ActionRow]: ActionRow[K] | null;
} & { [K in keyof AgentRow as `agent_${K}`]: AgentRow[K] } & { agent_identity: string | null };

function actionOf(row: LookupRow): ActionRow {
  const action: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key !== "board_head" && !key.startsWith("agent_")) action[key] = value;
  }
  return action as unknown as ActionRow;
}
