import type {
  ActionDraft,
  ActionId,
  ActionPage,
  ActionRecord,
  ActionSender,
  ActionWaitResult,
  ActionWaitUntil,
  ActiveAgent,
  AgentIdentity,
  AgentName,
  AgentProcess,
  AgentRecord,
  ApprovalDecision,
  ApprovalRequest,
  BoardChanges,
  BoardSettings,
  CancelledAction,
  ClaimNextOutcome,
  ClaimOutcome,
  CompleteOutcome,
  Cursor,
  DecideOutcome,
  Departure,
  OpenAction,
  Retirement,
} from "@bridgeworks/protocol";

/** Time and randomness, injected so tests control them. */
export interface BoardDeps {
  /** Milliseconds since the epoch. */
  now: () => number;
  randomBytes: (size: number) => Uint8Array;
}

export interface ListOptions {
  /** Resume after this position; absent means from the start of the board. */
  cursor?: Cursor | undefined;
  /** 1..500, default 50. */
  limit?: number | undefined;
}

export interface WaitOptions {
  /** 0..3_600_000. The wait returns within this bound, with an empty page when nothing came. */
  timeoutMs: number;
  /** Aborting rejects the wait at once with the signal's reason; nothing on the board changes. */
  signal?: AbortSignal | undefined;
  /** 1..500, default 20. */
  limit?: number | undefined;
}

export interface RegisterOptions {
  /**
   * Default true: the identity holds a lease of the board's TTL that its process must `renew`; when
   * it lapses (the process died, or lost the board) the identity ends as `expired` and its claims
   * become claimable again. false: a person's identity, which holds until it ends.
   */
  lease?: boolean | undefined;
  /** The process the identity belongs to, shown to people watching the board. */
  process?: AgentProcess | undefined;
}

export interface CompleteOptions {
  /**
   * The fencing token of the claim (`ClaimedAction.fence`): a complete under any other token is
   * refused `stale_fence`, as is one by an identity whose lease has lapsed.
   */
  fence?: number | undefined;
}

export interface ActionWaitOptions {
  /** 0..3_600_000. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export interface ChangesWaitOptions extends ActionWaitOptions {
  /** The agents version the caller last saw: a different one ends the wait too. */
  agentsVersion?: number | undefined;
  /** 1..500, default 50. */
  limit?: number | undefined;
}

/** What a lease sweep ended: the identities whose leases lapsed, and the actions they released. */
export interface LeaseSweep {
  expired: AgentIdentity[];
  released: ActionId[];
}

export interface RetireOptions {
  /**
   * An already registered successor to retire into, for retrying a retire that failed after it
   * registered the successor (`RetireIncompleteError.successor`).
   */
  successor?: AgentIdentity | undefined;
}

/** Actions: posted, read, listed, claimed, completed and cancelled (`core/actions.ts`). */
export interface BoardActions {
  /** Posts an open action. An agent sender must be active. */
  post(draft: ActionDraft): Promise<OpenAction>;

  get(id: ActionId): Promise<ActionRecord>;

  /** Records changed after `cursor`, oldest change first, and the cursor to resume after them. */
  list(options?: ListOptions): Promise<ActionPage>;

  /** Atomic compare-and-set from open to claimed. */
  claim(agent: AgentIdentity, id: ActionId): Promise<ClaimOutcome>;

  /**
   * Claims the oldest action `agent` can claim (open, addressed to its name or `*`; oldest by board
   * position, so the record `waitForClaimable` would list first) in one atomic step, or answers
   * `none` when there is nothing to claim. It picks only what it can win, so it never loses a race,
   * and no action is ever claimed twice.
   */
  claimNext(agent: AgentIdentity): Promise<ClaimNextOutcome>;

  /**
   * Only the claimer completes, while its lease holds (and under `options.fence` when given); an
   * old holder's complete is refused `stale_fence`.
   */
  complete(
    agent: AgentIdentity,
    id: ActionId,
    result?: string,
    options?: CompleteOptions,
  ): Promise<CompleteOutcome>;

  /** The poster (any identity of the posting agent) or a human cancels an open or claimed action. */
  cancel(by: ActionSender, id: ActionId, reason?: string): Promise<CancelledAction>;
}

/** Approvals: actions only their deciders decide, never claimed (`core/approvals.ts`). */
export interface BoardApprovals {
  /** Posts an approval: an open action of kind `approval` that only `deciders` may decide. */
  requestApproval(request: ApprovalRequest): Promise<OpenAction>;

  /**
   * Allows or denies an open approval, once: a later decision answers `already_decided`. A sender the
   * approval's deciders do not name is refused `not_permitted`.
   */
  decide(by: ActionSender, id: ActionId, decision: ApprovalDecision, reason?: string): Promise<DecideOutcome>;
}

/** Waits: bounded long polls that return as soon as the board changes (`core/waits.ts`). */
export interface BoardWaits {
  /**
   * Waits until actions `agent` can claim (open, addressed to its name or `*`) exist after `cursor`.
   * Returns them with the cursor after them, or on timeout `{records: [], cursor}` where the cursor
   * may have moved past records the caller cannot claim.
   */
  waitForClaimable(
    agent: AgentIdentity,
    cursor: Cursor | undefined,
    options: WaitOptions,
  ): Promise<ActionPage>;

  /**
   * Waits until the action is `claimed` (or past it) or `completed` (closed in any way), sweeping
   * lapsed leases as they lapse so a dead claimer never counts. On timeout `reached` is false and
   * the record is the action as it stands.
   */
  waitForAction(id: ActionId, until: ActionWaitUntil, options: ActionWaitOptions): Promise<ActionWaitResult>;

  /**
   * Waits for any change after `cursor` (an action, or the board's identities when `agentsVersion`
   * is given), sweeping lapsed leases as they lapse: a live view's next step.
   */
  waitForChanges(cursor: Cursor | undefined, options: ChangesWaitOptions): Promise<BoardChanges>;
}

/** Identities, their leases and the board's shared settings (`core/agents.ts`). */
export interface BoardAgents {
  /** Mints a fresh identity for `name` and records it active. */
  register(name: AgentName, options?: RegisterOptions): Promise<ActiveAgent>;

  /** Extends a leased identity's lease by the board's TTL; refuses `agent_not_active` once it lapsed. */
  renew(agent: AgentIdentity): Promise<ActiveAgent>;

  /** Ends every identity whose lease lapsed, releasing its claims and withdrawing its approvals. */
  expireLeases(): Promise<LeaseSweep>;

  /** Registers the successor first, then retires `agent` and releases its claims back to open. */
  retire(agent: AgentIdentity, options?: RetireOptions): Promise<Retirement>;

  /** Marks `agent` departed and releases its claims back to open. Departing again changes nothing. */
  depart(agent: AgentIdentity): Promise<Departure>;

  /** Every identity the board has seen, in registration order. */
  agents(): Promise<AgentRecord[]>;

  /** The board's shared settings. */
  settings(): Promise<BoardSettings>;

  /** Changes the board's shared settings (a new lease TTL applies from each identity's next renewal). */
  configure(settings: Partial<BoardSettings>): Promise<BoardSettings>;
}

/**
 * The bee board. Every change gives the changed record the next board position (`seq`), so a cursor
 * is a position in change order and a page holds the records whose latest change is after it.
 * Refusals are `BoardError`s; a bad argument names itself in `argument`. Its methods come by area,
 * one interface each, so a caller that needs one area can ask for just that.
 */
export interface Board extends BoardActions, BoardApprovals, BoardWaits, BoardAgents {
  /** Rejects pending waits with `closed` and releases every handle. Idempotent. */
  close(): Promise<void>;
}
