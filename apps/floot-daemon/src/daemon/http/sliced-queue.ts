export interface SlicedQueueOptions {
  /** How much of one turn of the event loop the queue may take before the loop polls again. */
  sliceMs: number;
  now?: () => number;
  /** Hears a task that threw; the tasks after it still run. */
  onError: (error: unknown) => void;
}

interface Task {
  run(): void;
  /** A `turn()`: its caller goes on in a microtask, and that work belongs to the slice too. */
  resumes: boolean;
}

/**
 * Runs queued tasks in arrival order, after the current turn of the event loop and at most `sliceMs` of
 * them per turn, the rest after the loop has polled again. A hundred followers (re)connecting at once
 * (a daemon restart, a UI reload), eight overview pages or ten turn submissions then go a few at a
 * time, and a read that arrives meanwhile is answered between them, not after all of them.
 */
export class SlicedQueue {
  readonly #tasks: Task[] = [];
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
    this.#tasks.push({ run: task, resumes: false });
    this.#schedule();
  }

  /**
   * Resolves when the queue comes to the caller; what the caller then does before its next `await`
   * counts toward that slice, e.g. one step of a long page: `await queue.turn(); step();`.
   */
  turn(): Promise<void> {
    return new Promise((resolve) => {
      this.#tasks.push({ run: resolve, resumes: true });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#nextTurnOfTheLoop();
  }

  /** An immediate queued from an immediate runs in the next turn, after the loop's poll for I/O. */
  #nextTurnOfTheLoop(): void {
    setImmediate(() => this.#runSlice(this.#now()));
  }

  #runSlice(startedAt: number): void {
    while (this.#tasks.length > 0) {
      const task = this.#tasks.shift()!;
      try {
        task.run();
      } catch (error) {
        this.#onError(error);
      }
      if (task.resumes) {
        // Queued after the caller's continuation: the slice goes on once that has run.
        queueMicrotask(() => this.#goOn(startedAt));
        return;
      }
      if (this.#now() - startedAt >= this.#sliceMs) {
        this.#nextTurnOfTheLoop();
        return;
      }
    }
    this.#scheduled = false;
  }

  #goOn(startedAt: number): void {
    if (this.#tasks.length === 0) this.#scheduled = false;
    else if (this.#now() - startedAt >= this.#sliceMs) this.#nextTurnOfTheLoop();
    else this.#runSlice(startedAt);
  }
}
