import type { TurnEventEnvelope } from "@bridgeworks/protocol";
import { type TurnListener, TurnSubscribers } from "./subscribers.js";

/**
 * What the journal's commits tell in-process listeners: a turn's subscribers hear each commit that
 * added events to it, with those events; session listeners hear each session whose list view a commit
 * changed. Both only after the commit: nothing that rolled back is ever heard.
 */
export class ChangeFeed {
  readonly #turns: TurnSubscribers;
  readonly #sessionListeners = new Set<(sessionId: string) => void>();
  readonly #eventListeners = new Set<(turnId: string, committed: readonly TurnEventEnvelope[]) => void>();
  readonly #onError: (error: unknown) => void;
  #changedSessions = new Set<string>();
  /** What the open transaction wrote, per turn; handed to subscribers once it committed. */
  #written = new Map<string, TurnEventEnvelope[]>();

  constructor(onError: (error: unknown) => void) {
    this.#onError = onError;
    this.#turns = new TurnSubscribers(onError);
  }

  subscribeTurn(turnId: string, listener: TurnListener): () => void {
    return this.#turns.subscribe(turnId, listener);
  }

  subscribeSessions(listener: (sessionId: string) => void): () => void {
    const entry = (sessionId: string) => listener(sessionId);
    this.#sessionListeners.add(entry);
    return () => this.#sessionListeners.delete(entry);
  }

  /** Every turn's committed events, each commit's once, in index order. */
  subscribeEvents(listener: (turnId: string, committed: readonly TurnEventEnvelope[]) => void): () => void {
    const entry = (turnId: string, committed: readonly TurnEventEnvelope[]) => listener(turnId, committed);
    this.#eventListeners.add(entry);
    return () => this.#eventListeners.delete(entry);
  }

  /** In a transaction: what a list shows of this session changed. */
  sessionChanged(sessionId: string): void {
    this.#changedSessions.add(sessionId);
  }

  /** In a transaction: where the events written to a turn are noted, for its subscribers. */
  writtenTo(turnId: string): TurnEventEnvelope[] {
    let written = this.#written.get(turnId);
    if (!written) {
      written = [];
      this.#written.set(turnId, written);
    }
    return written;
  }

  /** A transaction failed: no session change of the outermost one is announced, no event is handed out. */
  rolledBack(outermost: boolean): void {
    if (outermost) this.#changedSessions.clear();
    // Even a nested failure: a subscriber then reads the journal, it never hears rolled-back events.
    this.#written.clear();
  }

  /** The outermost transaction committed: session listeners hear what it changed. */
  committed(): void {
    if (this.#changedSessions.size === 0) return;
    const changed = this.#changedSessions;
    this.#changedSessions = new Set();
    for (const sessionId of changed) {
      for (const listener of [...this.#sessionListeners]) {
        try {
          listener(sessionId);
        } catch (error) {
          this.#onError(error);
        }
      }
    }
  }

  /** Wakes the turns' subscribers with the events just committed to each (they need not read them back). */
  notify(turnIds: Iterable<string>): void {
    const written = this.#written;
    this.#written = new Map();
    this.#turns.notify(turnIds, written);
    if (this.#eventListeners.size === 0) return;
    for (const [turnId, committed] of written) {
      if (committed.length === 0) continue;
      for (const listener of [...this.#eventListeners]) {
        try {
          listener(turnId, committed);
        } catch (error) {
          this.#onError(error);
        }
      }
    }
  }
}
