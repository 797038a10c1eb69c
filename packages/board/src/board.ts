import type {
  ActionDraft,
  ActionId,
  ActionPage,
  ActionRecord,
  ActionSender,
  ActiveAgent,
  AgentIdentity,
  AgentName,
  AgentRecord,
  CancelledAction,
  ClaimNextOutcome,
  ClaimOutcome,
  CompleteOutcome,
  Cursor,
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

export interface RetireOptions {
  /**
   * An already registered successor to retire into, for retrying a retire that failed after it
   * registered the successor (`RetireIncompleteError.successor`).
   */
  successor?: AgentIdentity | undefined;
}

/**
 * The bee board. Every change gives the changed record the next board position (`seq`), so a cursor
 * is a position in change order and a page holds the records whose latest change is after it.
 * Refusals are `BoardError`s; a bad argument names itself in `argument`.
 */
export interface Board {
  /** Posts an open action. An agent sender must be active. */
  post(draft: ActionDraft): Promise<OpenAction>;

  get(id: ActionId): Promise<ActionRecord>;

  /** Records changed after `cursor`, oldest change first, and the cursor to resume after them. */
  list(options?: ListOptions): Promise<ActionPage>;

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

  /** Atomic compare-and-set from open to claimed. */
  claim(agent: AgentIdentity, id: ActionId): Promise<ClaimOutcome>;

  /**
   * Claims the oldest action `agent` can claim (open, addressed to its name or `*`; oldest by board
   * position, so the record `waitForClaimable` would list first) in one atomic step, or answers
   * `none` when there is nothing to claim. It picks only what it can win, so it never loses a race,
   * and no action is ever claimed twice.
   */
  claimNext(agent: AgentIdentity): Promise<ClaimNextOutcome>;

  /** Only the claimer completes. */
  complete(agent: AgentIdentity, id: ActionId, result?: string): Promise<CompleteOutcome>;

  /** The poster (any identity of the posting agent) or a human cancels an open or claimed action. */
  cancel(by: ActionSender, id: ActionId, reason?: string): Promise<CancelledAction>;

  /** Mints a fresh identity for `name` and records it active. */
  register(name: AgentName): Promise<ActiveAgent>;

  /** Registers the successor first, then retires `agent` and releases its claims back to open. */
  retire(agent: AgentIdentity, options?: RetireOptions): Promise<Retirement>;

  /** Marks `agent` departed and releases its claims back to open. Departing again changes nothing. */
  depart(agent: AgentIdentity): Promise<Departure>;

  /** Every identity the board has seen, in registration order. */
  agents(): Promise<AgentRecord[]>;

  /** Rejects pending waits with `closed` and releases every handle. Idempotent. */
  close(): Promise<void>;
}
