/** Time as the journal sees it: wall-clock milliseconds and one-shot timers for batched flushes. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => {
    const timer = setTimeout(callback, delayMs);
    // A pending flush must not keep a finished process alive; `close()` flushes what is left.
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export function isoTime(milliseconds: number): string {
  return new Date(milliseconds).toISOString();
}
