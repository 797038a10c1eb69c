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

export interface EndAgentRequest {
  identity: string;
  status: "retired" | "departed";
  successor: string | null;
  now: number;
}

export interface ScanRows {
  rows: ActionRow[];
  /** The board's latest position, read in the same snapshot as `rows`. */
  head: number;
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
  /** The board's latest position. */
  head: number;
}

/**
 * The questions every store answers in its own SQL, one method per question; no decisions live in
 * a store. Every change takes the next board position. Each write is one statement that checks
 * everything it depends on (a compare-and-set), so the core runs it as a transaction of its own; a
 * write that finds nothing to change answers undefined, and the core reads afterwards to say why.
 */
export interface Store {
  /** Inserts unless the sender is an agent identity that is not active, or the minted id is taken. */
  insertAction(action: NewAction): Awaitable<ActionRow | undefined>;
  action(id: string): Awaitable<ActionRow | undefined>;
  /** The action, the identity and the head, in one snapshot, for the reads that explain a refusal. */
  lookup(request: LookupRequest): Awaitable<Lookup>;
  /** Records changed after `after`, oldest change first, and the head, in one snapshot. */
  actionsAfter(after: number, limit: number): Awaitable<ScanRows>;
  /** Open actions addressed to `name` or `*` after `after`, and the head, in one snapshot. */
  claimableAfter(name: string, after: number, limit: number): Awaitable<ScanRows>;
  /** The compare-and-set: claims only an open, addressed action for an active agent. */
  claim(id: string, agent: string, name: string, now: number): Awaitable<ActionRow | undefined>;
  /** Claims the open action addressed to `name` or `*` with the lowest position, for an active agent. */
  claimNext(agent: string, name: string, now: number): Awaitable<ActionRow | undefined>;
  /** Completes only an action `agent` holds. */
  complete(id: string, agent: string, result: string | null, now: number): Awaitable<ActionRow | undefined>;
  /** Cancels for a human (`byAgent` null) or for an active identity of the posting agent. */
  cancel(request: CancelRequest): Awaitable<ActionRow | undefined>;
  /** Inserts unless the minted identity is taken (then undefined: mint again). */
  insertAgent(identity: string, name: string, now: number): Awaitable<AgentRow | undefined>;
  /** Every identity, in registration order. */
  agents(): Awaitable<AgentRow[]>;
  /**
   * Ends an active identity and returns its claims to open, each at a new position so waiters
   * whose cursors are past the old one see it again. Undefined when the identity was not active.
   */
  endAgent(request: EndAgentRequest): Awaitable<{ agent: AgentRow; released: string[] } | undefined>;
}
