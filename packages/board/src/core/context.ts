import type { ActionPage, Cursor } from "@bridgeworks/protocol";
import type { BoardDeps } from "../board.js";
import type { Awaitable, Store } from "../store.js";
import type { WaitForRecordsInput } from "../wait.js";

/** A wait as the core asks for it; the runner brings the change feed. */
export type StoreWaitInput = Omit<WaitForRecordsInput, "changes">;

/** How one store runs the core's questions: its connections, transactions, errors and wake-ups. */
export interface StoreRunner {
  /** What messages call the store: `board file`, `board database`. */
  readonly noun: string;
  /** Runs reads, turning contention or a lost server into the retryable `busy`. */
  read<T>(operation: (store: Store) => Promise<T>): Promise<T>;
  /**
   * Runs `operation`, which makes exactly one write through the store, as one transaction, and,
   * when it changed something, wakes the waiters for that change here and in other processes.
   * `operation` must make its write at once: a store that answers at once (SQLite) never spans a
   * turn of the event loop, and one that answers later (PostgreSQL) sends the whole transaction in
   * one round trip.
   */
  write<T>(operation: (store: Store) => Awaitable<T>): Promise<T>;
  /** `waitForRecords` on the store's change feed. */
  wait(input: StoreWaitInput): Promise<ActionPage>;
  /** Releases every handle; the core has already rejected pending waits. */
  close(): Promise<void>;
}

/** What the core's parts share: the runner's reads and writes (refused after close), time, cursors. */
export interface CoreContext {
  readonly deps: BoardDeps;
  readonly runner: StoreRunner;
  /** Aborts when the board closes. */
  readonly closing: AbortSignal;
  read<T>(operation: (store: Store) => Promise<T>): Promise<T>;
  write<T>(operation: (store: Store) => Awaitable<T>): Promise<T>;
  /** The position a cursor names; the start of the board without one. */
  position(cursor: unknown): number;
  /** Refuses a cursor past the head: it was minted by a board since replaced under the same id. */
  requireWithin(position: number, head: number): void;
  cursorAt(position: number): Cursor;
}
