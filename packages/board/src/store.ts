import type { ActionRow, AgentRow } from "./rows.js";

/** A store's answer now (SQLite) or later (PostgreSQL). */
export type Awaitable<T> = T | Promise<T>;

export interface NewAction {
  id: string;
  kind: string;
  recipient: string;
  sender: string;
  /** The posting agent's name; null when a human posted. */
  senderAgent: string | null;
  body: string;
  /** An approval's deciders; null for any other action. */
  deciders: string[] | null;
  now: number;
}

export interface NewAgent {
  identity: string;
  name: string;
  /** Whether the identity holds a lease (of the board's TTL, from the store's clock) it must renew. */
  leased: boolean;
  host: string | null;
  pid: number | null;
  now: number;
}

export interface CompleteRequest {
  id: string;
  agent: string;
  result: string | null;
  /** The fencing token the caller holds the action under; null to rely on the identity alone. */
  fence: number | null;
  now: number;
}

export interface CancelRequest {
  id: string;
  by: string;
  /** The cancelling agent's name; null when a human cancels. */
  byAgent: string | null;
  reason: string | null;
  now: number;
}

export interface DecideRequest {
  id: string;
  by: string;
  /** The decider's name as an approval's deciders name it: an agent's name, or the human sender. */
  byName: string;
  /** Whether `by` is a person (then the decider `human` admits it too). */
  byHuman: boolean;
  decision: string;
  reason: string | null;
  now: number;
}

export interface EndAgentRequest {
  identity: string;
  status: "retired" | "departed";
  successor: string | null;
  now: number;
}

/** What a lease sweep or an ending identity released: claims back to open, approvals withdrawn. */
export interface Released {
  released: string[];
}

export interface ScanRows {
  rows: ActionRow[];
  /** The board's latest position, read in the same snapshot as `rows`. */
  head: number;
  /**
   * Milliseconds (the store's clock) until the earliest lease of an active identity lapses: at or
   * below 0, one has lapsed and a sweep would end it. Undefined when no active identity holds a lease.
   */
  leaseExpiresInMs: number | undefined;
  /** Moves whenever an identity is registered or ends. */
  agentsVersion: number;
}

export interface LookupRequest {
  action?: string | undefined;
  agent?: string | undefined;
}

export interface Lookup {
  /** Absent when the request named no action or no such action exists. */
  action?: ActionRow | undefined;
  /** Absent when the request named no identity or no such identity is registered. */
  agent?: AgentRow | undefined;
  /**
   * Milliseconds (the store's clock) until the identity's lease lapses; at or below 0 it has lapsed
   * (the identity no longer counts as active). Undefined without an identity or a lease.
   */
  agentLeaseExpiresInMs: number | undefined;
  /** The board's latest position. */
  head: number;
}

export interface StoreSettings {
  lease_ttl_ms: number;
}

/**
 * The questions every store answers in its own SQL, one method per question, by area; no decisions
 * live in a store. Every change takes the next board position. Each write is one statement that
 * checks everything it depends on (a compare-and-set), so the core runs it as a transaction of its
 * own; a write that finds nothing to change answers undefined, and the core reads afterwards to say
 * why. Lease times are the store's own clock (SQLite: the machine's; PostgreSQL: the server's), so
 * every process of a board agrees on them; an identity counts as active only while its lease holds.
 */
export interface Store {
  readonly actions: ActionStore;
  readonly agents: AgentStore;
  /** The action, the identity and the head, in one snapshot, for the reads that explain a refusal. */
  lookup(request: LookupRequest): Awaitable<Lookup>;
  settings(): Awaitable<StoreSettings>;
  setLeaseTtl(leaseTtlMs: number): Awaitable<StoreSettings>;
}

/** Actions and approvals (an approval is an action of kind `approval`): their rows and their compare-and-sets. */
export interface ActionStore {
  /** Inserts unless the sender is an agent identity that is not active, or the minted id is taken. */
  insert(action: NewAction): Awaitable<ActionRow | undefined>;
  get(id: string): Awaitable<ActionRow | undefined>;
  /** Records changed after `after`, oldest change first, and the head, in one snapshot. */
  changedAfter(after: number, limit: number): Awaitable<ScanRows>;
  /** Open actions addressed to `name` or `*` after `after`, and the head, in one snapshot. */
  claimableAfter(name: string, after: number, limit: number): Awaitable<ScanRows>;
  /**
   * The compare-and-set: first ends every identity whose lease lapsed (releasing its claims), then
   * claims only an open, addressed action that is not an approval, for an active agent.
   */
  claim(id: string, agent: string, name: string, now: number): Awaitable<ActionRow | undefined>;
  /** Ends lapsed leases as `claim` does, then claims the open action addressed to `name` or `*` with the lowest position. */
  claimNext(agent: string, name: string, now: number): Awaitable<ActionRow | undefined>;
  /** Completes only an action `agent` holds, under `fence` when given, while its lease holds. */
  complete(request: CompleteRequest): Awaitable<ActionRow | undefined>;
  /** Cancels for a human (`byAgent` null) or for an active identity of the posting agent. */
  cancel(request: CancelRequest): Awaitable<ActionRow | undefined>;
  /** Decides an open approval for a decider it names (an agent decider must be active). */
  decide(request: DecideRequest): Awaitable<ActionRow | undefined>;
}

/** Identities and their leases. */
export interface AgentStore {
  /** Inserts unless the minted identity is taken (then undefined: mint again). */
  insert(agent: NewAgent): Awaitable<AgentRow | undefined>;
  /** Extends an active identity's lease by the board's TTL; undefined when it is not active or has lapsed. */
  renewLease(identity: string): Awaitable<AgentRow | undefined>;
  /** Every identity, in registration order. */
  all(): Awaitable<AgentRow[]>;
  /**
   * Ends an active identity and returns its claims to open, each at a new position so waiters
   * whose cursors are past the old one see it again, and withdraws the approvals it asked for.
   * Undefined when the identity was not active.
   */
  end(request: EndAgentRequest): Awaitable<({ agent: AgentRow } & Released) | undefined>;
  /** Ends (as `expired`) every active identity whose lease lapsed, as `end` does. */
  expireLeases(now: number): Awaitable<{ expired: string[] } & Released>;
}
