import type pg from "pg";
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

/** What the store sends statements through: a pool for reads, one pipelined transaction for a write. */
export interface Queryable {
  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}

/**
 * Columns by name, never `*`: a prepared statement's result shape is fixed when it is parsed, so a
 * later migration that adds a column must not change what a running bee's statements return.
 */
const actionColumns =
  "id, seq, kind, recipient, sender, sender_agent, body, state, claimed_by, claimed_at, cancelled_by, result, created_at, closed_at";
const agentColumns = "identity, name, status, registered_at, ended_at, successor";
const lookupAgentColumns =
  "g.identity AS agent_identity, g.name AS agent_name, g.status AS agent_status, g.registered_at AS agent_registered_at, g.ended_at AS agent_ended_at, g.successor AS agent_successor";

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
    `SELECT latest.board_head, found.*
     FROM (SELECT ${head} AS board_head) AS latest
     LEFT JOIN LATERAL (
       SELECT ${actionColumns} FROM ${actions} WHERE ${where} ORDER BY seq LIMIT $2
     ) AS found ON true
     ORDER BY found.seq`;
  return {
    boardId: `SELECT id FROM ${schema}.board`,
    insertAction: call("insert_action", 7),
    action: `SELECT ${actionColumns} FROM ${actions} WHERE id = $1`,
    lookup: `SELECT ${head} AS board_head, ${prefixed("a", actionColumns)}, ${lookupAgentColumns}
     FROM (VALUES (1)) AS one (x)
     LEFT JOIN ${actions} AS a ON a.id = $1::text
     LEFT JOIN ${agents} AS g ON g.identity = $2::text`,
    actionsAfter: scan("seq > $1"),
    claimableAfter: scan("state = 'open' AND recipient IN ($3, '*') AND seq > $1"),
    claim: call("claim", 4),
    claimNext: call("claim_next", 3),
    complete: call("complete", 4),
    cancel: call("cancel", 5),
    insertAgent: call("insert_agent", 3, agentColumns),
    agents: `SELECT ${agentColumns} FROM ${agents} ORDER BY position`,
    endAgent: `SELECT ${prefixed("(ended.agent)", agentColumns)}, ended.released, ended.released_head
     FROM ${schema}.end_agent($1, $2, $3, $4) AS ended`,
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
  #claimableHead: number | undefined;

  constructor(db: Queryable, statements: PostgresStatements) {
    this.#db = db;
    this.#statements = statements;
  }

  /** The board's new head after a write through this store that made an action claimable (and NOTIFYed). */
  get claimableHead(): number | undefined {
    return this.#claimableHead;
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
      action.now,
    ]);
    if (inserted !== undefined) this.#claimableHead = inserted.seq;
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
            },
    };
  }

  actionsAfter(after: number, limit: number): Promise<ScanRows> {
    return this.#scan("actionsAfter", [after, limit]);
  }

  claimableAfter(name: string, after: number, limit: number): Promise<ScanRows> {
    return this.#scan("claimableAfter", [after, limit, name]);
  }

  claim(id: string, agent: string, name: string, now: number): Promise<ActionRow | undefined> {
    return this.#one("claim", [id, agent, name, now]);
  }

  claimNext(agent: string, name: string, now: number): Promise<ActionRow | undefined> {
    return this.#one("claimNext", [agent, name, now]);
  }

  complete(id: string, agent: string, result: string | null, now: number): Promise<ActionRow | undefined> {
    return this.#one("complete", [id, agent, result, now]);
  }

  cancel(input: CancelRequest): Promise<ActionRow | undefined> {
    return this.#one("cancel", [input.id, input.by, input.byAgent, input.reason, input.now]);
  }

  async insertAgent(identity: string, name: string, now: number): Promise<AgentRow | undefined> {
    return this.#one<AgentRow>("insertAgent", [identity, name, now]);
  }

  agents(): Promise<AgentRow[]> {
    return this.#all<AgentRow>("agents", []);
  }

  async endAgent(input: EndAgentRequest): Promise<{ agent: AgentRow; released: string[] } | undefined> {
    const [row] = await this.#all<EndedRow>("endAgent", [
      input.identity,
      input.status,
      input.now,
      input.successor,
    ]);
    if (row === undefined) return undefined;
    const { released, released_head, ...agent } = row;
    if (released_head !== null) this.#claimableHead = released_head;
    return { agent, released };
  }

  async #one<T extends pg.QueryResultRow>(name: StatementName, values: unknown[]): Promise<T | undefined> {
    return (await this.#all<T>(name, values))[0];
  }

  async #scan(name: "actionsAfter" | "claimableAfter", values: unknown[]): Promise<ScanRows> {
    const rows = await this.#all<ScanRow>(name, values);
    return {
      rows: rows.filter((row) => row.id !== null).map(({ board_head: _, ...row }) => row as ActionRow),
      head: rows[0]?.board_head ?? 0,
    };
  }

  async #all<T extends pg.QueryResultRow>(name: StatementName, values: unknown[]): Promise<T[]> {
    return (await this.#db.query<T>(this.#statements.prepared(name, values))).rows;
  }
}

type EndedRow = AgentRow & { released: string[]; released_head: number | null };

type ScanRow = { board_head: number } & { [K in keyof ActionRow]: ActionRow[K] | null };

interface LookupRow extends ScanRow {
  agent_identity: string | null;
  agent_name: string;
  agent_status: string;
  agent_registered_at: number;
  agent_ended_at: number | null;
  agent_successor: string | null;
}

function actionOf(row: LookupRow): ActionRow {
  const {
    board_head: _head,
    agent_identity: _identity,
    agent_name: _name,
    agent_status: _status,
    agent_registered_at: _registered,
    agent_ended_at: _ended,
    agent_successor: _successor,
    ...action
  } = row;
  return action as ActionRow;
}
