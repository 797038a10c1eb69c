import type Database from "better-sqlite3";
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
import { prepareStatements, type SqliteStatements } from "./statements.js";

/** What a write transaction changed, for the wake-ups after it commits. */
export type SqliteChange = "none" | "other" | "claimable";

/**
 * The SQL of the board, one prepared statement per question, answered at once; no decisions live
 * here. By area: `actions` and `agents`, over one connection's statements.
 */
export class SqliteStore implements Store {
  readonly actions: SqliteActions;
  readonly agents: SqliteAgents;
  readonly #shared: SqliteShared;

  constructor(db: Database.Database) {
    this.#shared = new SqliteShared(db);
    this.agents = new SqliteAgents(this.#shared);
    this.actions = new SqliteActions(this.#shared, this.agents);
  }

  boardId(): string {
    const row = this.#shared.statements.boardId.get();
    if (row === undefined) throw new Error("the board file has no board id; its schema is damaged");
    return row.id;
  }

  head(): number {
    return this.#shared.head();
  }

  /**
   * What the writes since the last call changed: `claimable` when one made an action claimable (a
   * post or a release, the only changes most waiters wait for), `other` for any other change; clears it.
   */
  takeChange(): SqliteChange {
    return this.#shared.takeChange();
  }

  lookup(request: LookupRequest): Lookup {
    const { statements } = this.#shared;
    return this.#shared.read(() => {
      const agent = request.agent === undefined ? undefined : statements.agent.get(request.agent);
      return {
        action: request.action === undefined ? undefined : statements.action.get(request.action),
        agent,
        agentLeaseExpiresInMs:
          agent === undefined
            ? undefined
            : (statements.leaseExpiresIn.get(agent.identity)?.expires_in_ms ?? undefined),
        head: this.#shared.head(),
      };
    });
  }

  settings(): StoreSettings {
    const row = this.#shared.statements.settings.get();
    if (row === undefined) throw new Error("the board file has no settings row; its schema is damaged");
    return row;
  }

  setLeaseTtl(leaseTtlMs: number): StoreSettings {
    this.#shared.statements.setLeaseTtl.run(leaseTtlMs);
    this.#shared.changed("other");
    return this.settings();
  }
}

/** Actions and approvals: their rows, scans and compare-and-sets. */
class SqliteActions implements ActionStore {
  readonly #shared: SqliteShared;
  readonly #statements: SqliteStatements;
  /** A claim ends lapsed leases first, in its own transaction. */
  readonly #agents: SqliteAgents;

  constructor(shared: SqliteShared, agents: SqliteAgents) {
    this.#shared = shared;
    this.#statements = shared.statements;
    this.#agents = agents;
  }

  insert(action: NewAction): ActionRow | undefined {
    const inserted = this.#statements.insertAction.get({
      ...action,
      deciders: action.deciders === null ? null : JSON.stringify(action.deciders),
    });
    if (inserted !== undefined) this.#shared.changed("claimable");
    return inserted;
  }

  get(id: string): ActionRow | undefined {
    return this.#statements.action.get(id);
  }

  /** Both reads in one snapshot, so the head never runs ahead of what the scan saw. */
  changedAfter(after: number, limit: number): ScanRows {
    return this.#shared.read(() => this.#scan(this.#statements.actionsAfter.all(after, limit)));
  }

  /** Both reads in one snapshot, so the head never runs ahead of what the scan saw. */
  claimableAfter(name: string, after: number, limit: number): ScanRows {
    return this.#shared.read(() => this.#scan(this.#statements.claimableAfter.all({ name, after, limit })));
  }

  claim(id: string, agent: string, name: string, now: number): ActionRow | undefined {
    this.#agents.expireLeases(now);
    return this.#other(this.#statements.claim.get({ id, agent, name, now }));
  }

  claimNext(agent: string, name: string, now: number): ActionRow | undefined {
    this.#agents.expireLeases(now);
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

  #other(row: ActionRow | undefined): ActionRow | undefined {
    if (row !== undefined) this.#shared.changed("other");
    return row;
  }

  #scan(rows: ActionRow[]): ScanRows {
    const leases = this.#statements.leases.get();
    return {
      rows,
      head: this.#shared.head(),
      leaseExpiresInMs: leases?.expires_in_ms ?? undefined,
      agentsVersion: leases?.agents_version ?? 0,
    };
  }
}

/** Identities and their leases; an identity's end releases its claims and withdraws its approvals. */
class SqliteAgents implements AgentStore {
  readonly #shared: SqliteShared;
  readonly #statements: SqliteStatements;

  constructor(shared: SqliteShared) {
    this.#shared = shared;
    this.#statements = shared.statements;
  }

  insert(agent: NewAgent): AgentRow | undefined {
    const inserted = this.#statements.insertAgent.get({ ...agent, leased: agent.leased ? 1 : 0 });
    if (inserted !== undefined) this.#agentsChanged();
    return inserted;
  }

  renewLease(identity: string): AgentRow | undefined {
    return this.#statements.renewLease.get(identity);
  }

  all(): AgentRow[] {
    return this.#statements.agents.all();
  }

  end(input: EndAgentRequest): ({ agent: AgentRow } & Released) | undefined {
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

  /**
   * Returns the identity's claims to open, each at the next position in their old order, and
   * withdraws the approvals it asked for. One row at a time: each takes its own next position.
   */
  #release(identity: string, now: number): string[] {
    const released = this.#statements.claimsOf
      .all(identity)
      .map(({ id }) => this.#statements.release.get(id)?.id)
      .filter((id): id is string => id !== undefined);
    if (released.length > 0) this.#shared.changed("claimable");
    for (const { id } of this.#statements.approvalsOf.all(identity)) {
      const reason = `withdrawn: ${identity}, which asked for it, ended`;
      if (this.#statements.withdraw.get({ id, identity, reason, now }) !== undefined) {
        this.#shared.changed("other");
      }
    }
    return released;
  }

  #agentsChanged(): void {
    this.#statements.bumpAgentsVersion.run();
    this.#shared.changed("other");
  }
}

/**
 * What the areas of one store share: the connection's prepared statements, its read snapshots, and
 * what the writes since the last `takeChange` changed.
 */
class SqliteShared {
  readonly statements: SqliteStatements;
  readonly #db: Database.Database;
  #change: SqliteChange = "none";

  constructor(db: Database.Database) {
    this.#db = db;
    this.statements = prepareStatements(db);
  }

  /** Records a change; `claimable` outranks `other` until the next `takeChange`. */
  changed(change: "other" | "claimable"): void {
    if (change === "claimable" || this.#change === "none") this.#change = change;
  }

  takeChange(): SqliteChange {
    const change = this.#change;
    this.#change = "none";
    return change;
  }

  /** Runs `read` in one deferred transaction: one snapshot. */
  read<T>(read: () => T): T {
    return this.#db.transaction(read).deferred();
  }

  head(): number {
    return this.statements.head.get()?.head ?? 0;
  }
}
