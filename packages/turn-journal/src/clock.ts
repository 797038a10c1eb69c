/** Time as the journal sees it: wall-clock milliseconds and one-shot timers for batched flushes. */
export interface Clock {
  now(): number;
  /** A delay of 0: once the current turn of the event loop has run its I/O callbacks. */
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** A delay of 0 in `systemClock`: an immediate, told apart from a timer when cleared. */
class AfterPoll {
  constructor(readonly immediate: NodeJS.Immediate) {}
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => {
    // A pending flush must not keep a finished process alive; `close()` flushes what is left.
    // Node's setTimeout(0) waits for the next timer tick (1 ms); setImmediate runs after this poll.
    if (delayMs === 0) return new AfterPoll(setImmediate(callback).unref());
    return setTimeout(callback, delayMs).unref();
  },
  clearTimeout: (handle) => {
    if (handle instanceof AfterPoll) clearImmediate(handle.immediate);
    else clearTimeout(handle as NodeJS.Timeout);
  },
};

export function isoTime(milliseconds: number): string {
  return new Date(milliseconds).toISOString();
}
