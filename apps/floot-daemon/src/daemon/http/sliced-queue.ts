export interface SlicedQueueOptions {
  /** How much of one turn of the event loop the queue may take before the loop polls again. */
  sliceMs: number;
  now?: () => number;
  /** Hears a task that threw; the tasks after it still run. */
  onError: (error: unknown) => void;
}

/**
 * Runs queued tasks in arrival order, after the current turn of the event loop and at most `sliceMs` of
 * them per turn, the rest after the loop has polled again. A hundred followers (re)connecting at once
 * (a daemon restart, a UI reload) then start a few at a time, and a read that arrives meanwhile is
 * answered between them, not after all of them.
 */
export class SlicedQueue {
  readonly #tasks: (() => void)[] = [];
  readonly #sliceMs: number;
  readonly #now: () => number;
  readonly #onError: (error: unknown) => void;
  #scheduled = false;

  constructor({ sliceMs, now = () => performance.now(), onError }: SlicedQueueOptions) {
    this.#sliceMs = sliceMs;
    this.#now = now;
    this.#onError = onError;
  }

  get waiting(): number {
    return this.#tasks.length;
  }

  run(task: () => void): void {
    this.#tasks.push(task);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // An immediate queued from an immediate runs in the next turn, after the loop's poll for I/O.
    setImmediate(() => this.#runSlice());
  }

  #runSlice(): void {
    this.#scheduled = false;
    const startedAt = this.#now();
    while (this.#tasks.length > 0) {
      const task = this.#tasks.shift()!;
      try {
        task();
      } catch (error) {
        this.#onError(error);
      }
      if (this.#now() - startedAt >= this.#sliceMs) break;
    }
    if (this.#tasks.length > 0) this.#schedule();
  }
}
