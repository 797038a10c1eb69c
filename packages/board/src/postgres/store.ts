import type pg from "pg";
import type { ActionRow, AgentRow } from "../rows.js";
import type {
  ActionStore,
  AgentStore,
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
import type { PostgresStatements, StatementName } from "./statements.js";

/** What the store sends statements through: a pool for reads, one pipelined transaction for a write. */
export interface Queryable {
  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}

/** What a write through a store changed (and NOTIFYed), with the board's new head when known. */
export interface PostgresChange {
  scope: ChangeScope;
  head: number | undefined;
}

/**
 * The SQL of the board, one statement per question; no decisions live here. Each write is a call of
 * its function (schema.ts), which takes the board's row lock first, so positions are assigned in
 * commit order and a reader never sees a lower one commit later. By area: `actions` and `agents`,
 * over one connection (or pool).
 */
export class PostgresStore implements Store {
  readonly actions: PostgresActions;
  readonly agents: PostgresAgents;
  readonly #shared: PostgresShared;

  constructor(db: Queryable, statements: PostgresStatements) {
    this.#shared = new PostgresShared(db, statements);
    this.actions = new PostgresActions(this.#shared);
    this.agents = new PostgresAgents(this.#shared);
  }

  /**
   * What a write through this store changed (and NOTIFYed): `claimable` when it made an action
   * claimable, `every` for any other change, with the board's new head when known.
   */
  get change(): PostgresChange | undefined {
    return this.#shared.change;
  }

  async boardId(): Promise<string> {
    const { rows } = await this.#shared.text<{ id: string }>("boardId");
    const id = rows[0]?.id;
    if (id === undefined) throw new Error("the board database has no board id; its schema is damaged");
    return id;
  }

  async lookup(request: LookupRequest): Promise<Lookup> {
    const [row] = await this.#shared.all<LookupRow>("lookup", [
      request.action ?? null,
      request.agent ?? null,
    ]);
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

  async settings(): Promise<StoreSettings> {
    const [row] = await this.#shared.all<StoreSettings>("settings", []);
    if (row === undefined) throw new Error("the board database has no board row; its schema is damaged");
    return row;
  }

  async setLeaseTtl(leaseTtlMs: number): Promise<StoreSettings> {
    const [row] = await this.#shared.all<StoreSettings>("setLeaseTtl", [leaseTtlMs]);
    if (row === undefined) throw new Error("the board database has no board row; its schema is damaged");
    return row;
  }
}

/** Actions and approvals: their rows, scans and compare-and-sets (a claim's lease sweep is in its function). */
class PostgresActions implements ActionStore {
  readonly #shared: PostgresShared;

  constructor(shared: PostgresShared) {
    this.#shared = shared;
  }

  async insert(action: NewAction): Promise<ActionRow | undefined> {
    const inserted = await this.#shared.one<ActionRow>("insertAction", [
      action.id,
      action.kind,
      action.recipient,
      action.sender,
      action.senderAgent,
      action.body,
      action.deciders,
      action.now,
    ]);
    if (inserted !== undefined) this.#shared.changed("claimable", inserted.seq);
    return inserted;
  }

  async get(id: string): Promise<ActionRow | undefined> {
    return this.#shared.one<ActionRow>("action", [id]);
  }

  changedAfter(after: number, limit: number): Promise<ScanRows> {
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

  async #changedOne(name: StatementName, values: unknown[]): Promise<ActionRow | undefined> {
    const row = await this.#shared.one<ActionRow>(name, values);
    if (row !== undefined) this.#shared.changed("every", row.seq);
    return row;
  }

  async #scan(name: "actionsAfter" | "claimableAfter", values: unknown[]): Promise<ScanRows> {
    const rows = await this.#shared.all<ScanRow>(name, values);
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
}

/** Identities and their leases; an identity's end releases its claims and withdraws its approvals (in SQL). */
class PostgresAgents implements AgentStore {
  readonly #shared: PostgresShared;

  constructor(shared: PostgresShared) {
    this.#shared = shared;
  }

  async insert(agent: NewAgent): Promise<AgentRow | undefined> {
    const { identity, name, leased, host, pid, now } = agent;
    const inserted = await this.#shared.one<AgentRow>("insertAgent", [
      identity,
      name,
      leased,
      host,
      pid,
      now,
    ]);
    if (inserted !== undefined) this.#shared.changed("every", undefined);
    return inserted;
  }

  renewLease(identity: string): Promise<AgentRow | undefined> {
    return this.#shared.one<AgentRow>("renewLease", [identity]);
  }

  all(): Promise<AgentRow[]> {
    return this.#shared.all<AgentRow>("agents", []);
  }

  async end(input: EndAgentRequest): Promise<({ agent: AgentRow } & Released) | undefined> {
    const [row] = await this.#shared.all<EndedRow>("endAgent", [
      input.identity,
      input.status,
      input.now,
      input.successor,
    ]);
    if (row === undefined) return undefined;
    const { released, ...agent } = row;
    this.#shared.changed(released.length > 0 ? "claimable" : "every", undefined);
    return { agent, released };
  }

  async expireLeases(now: number): Promise<{ expired: string[] } & Released> {
    const [row] = await this.#shared.all<{ expired: string[]; released: string[] }>("expireLeases", [now]);
    const swept = row ?? { expired: [], released: [] };
    if (swept.released.length > 0) this.#shared.changed("claimable", undefined);
    else if (swept.expired.length > 0) this.#shared.changed("every", undefined);
    return swept;
  }
}

/** What the areas of one store share: its connection, the board's statements, and what its writes changed. */
class PostgresShared {
  readonly #db: Queryable;
  readonly #statements: PostgresStatements;
  #change: PostgresChange | undefined;

  constructor(db: Queryable, statements: PostgresStatements) {
    this.#db = db;
    this.#statements = statements;
  }

  get change(): PostgresChange | undefined {
    return this.#change;
  }

  /** Records a change; `claimable` outranks `every`. */
  changed(scope: ChangeScope, head: number | undefined): void {
    if (this.#change?.scope === "claimable" && scope === "every") return;
    this.#change = { scope, head };
  }

  async one<T extends pg.QueryResultRow>(name: StatementName, values: unknown[]): Promise<T | undefined> {
    return (await this.all<T>(name, values))[0];
  }

  async all<T extends pg.QueryResultRow>(name: StatementName, values: unknown[]): Promise<T[]> {
    return (await this.#db.query<T>(this.#statements.prepared(name, values))).rows;
  }

  /** A one-off statement, sent as text. */
  text<T extends pg.QueryResultRow>(name: "boardId"): Promise<pg.QueryResult<T>> {
    return this.#db.query<T>({ text: this.#statements.text(name) });
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
