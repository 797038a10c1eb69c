import { availableParallelism } from "node:os";

/** As many CLIs starting at once as the machine has cores. */
export const defaultCliStarts = (): number => availableParallelism();
/** The longest a start holds its slot: a CLI slow to speak delays the next start by at most this. */
export const defaultCliStartHoldMs = 2_000;

export interface StartSlot {
  /** Frees the slot for the next waiting start; idempotent. */
  release(): void;
}

export interface CliStartSlotsOptions {
  /** How many starts run at once (an integer >= 1). */
  limit: number;
  /** After this long a start's slot is freed whether or not its CLI has spoken. */
  holdMs: number;
  setTimeout?: (callback: () => void, ms: number) => { unref?(): unknown };
}

interface Waiter {
  grant(slot: StartSlot): void;
}

/**
 * How many CLIs may be starting at once. Ten turns started together are ten node processes booting on
 * two cores: they take both cores for most of a second, and the daemon, which answers every page and
 * follower of every session, waits for a core like they do. A start holds its slot from just before
 * the spawn until its CLI first speaks, ends, or `holdMs` passes; the turns waiting for one stay
 * `accepted` and are served in the order they asked.
 */
export class CliStartSlots {
  readonly #options: CliStartSlotsOptions;
  readonly #waiting: Waiter[] = [];
  #taken = 0;

  constructor(options: CliStartSlotsOptions) {
    if (!Number.isInteger(options.limit) || options.limit < 1) {
      throw new RangeError(`limit: an integer >= 1, got ${options.limit}`);
    }
    if (!(options.holdMs > 0)) throw new RangeError(`holdMs: a number > 0, got ${options.holdMs}`);
    this.#options = options;
  }

  /** The starts holding a slot now. */
  get taken(): number {
    return this.#taken;
  }

  /** The starts waiting for one. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Resolves with a slot once one is free; rejects with the signal's reason if it aborts first. */
  take(signal?: AbortSignal): Promise<StartSlot> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#taken < this.#options.limit) {
      this.#taken += 1;
      return Promise.resolve(this.#slot());
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        grant: (slot) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(slot);
        },
      };
      this.#waiting.push(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  #slot(): StartSlot {
    let held = true;
    const slot = {
      release: () => {
        if (!held) return;
        held = false;
        const next = this.#waiting.shift();
        // Handed on as it is: the count of slots taken stays what it was.
        if (next) next.grant(this.#slot());
        else this.#taken -= 1;
      },
    };
    const setTimer = this.#options.setTimeout ?? setTimeout;
    setTimer(slot.release, this.#options.holdMs).unref?.();
    return slot;
  }
}
