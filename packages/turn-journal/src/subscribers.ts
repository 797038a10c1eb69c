import type { TurnEventEnvelope } from "@bridgeworks/protocol";

/**
 * Hears a turn's id after a commit that added events to it, with those events when the journal has
 * them at hand (in index order, exactly what the commit added); without them, read them back.
 */
export type TurnListener = (turnId: string, committed?: readonly TurnEventEnvelope[]) => void;

/** In-process wake-ups: a listener hears a turn's id after each commit that added events to it. */
export class TurnSubscribers {
  readonly #listeners = new Map<string, Set<TurnListener>>();
  readonly #onError: (error: unknown) => void;

  constructor(onError: (error: unknown) => void) {
    this.#onError = onError;
  }

  subscribe(turnId: string, listener: TurnListener): () => void {
    let listeners = this.#listeners.get(turnId);
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(turnId, listeners);
    }
    // Each subscription is its own entry, so subscribing the same function twice needs two unsubscribes.
    const entry: TurnListener = (id, committed) => listener(id, committed);
    listeners.add(entry);
    return () => {
      listeners.delete(entry);
      if (listeners.size === 0 && this.#listeners.get(turnId) === listeners) this.#listeners.delete(turnId);
    };
  }

  notify(
    turnIds: Iterable<string>,
    committed: ReadonlyMap<string, readonly TurnEventEnvelope[]> = new Map(),
  ): void {
    for (const turnId of new Set(turnIds)) {
      const listeners = this.#listeners.get(turnId);
      if (!listeners) continue;
      for (const listener of [...listeners]) {
        try {
          listener(turnId, committed.get(turnId));
        } catch (error) {
          // A follower's bug must not undo or block a commit that already happened.
          this.#onError(error);
        }
      }
    }
  }
}
