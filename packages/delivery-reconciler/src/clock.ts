/** Time as the ledger sees it: injected so tests drive it by hand. Handles are opaque to the ledger. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * The real clock. Its timers are unref'd: a pending deadline or watchdog must never keep Pi's process
 * alive after everything else has finished.
 */
export function createSystemClock(): Clock {
  return {
    now: () => Date.now(),
    setTimeout: (callback, delayMs) => setTimeout(callback, delayMs).unref(),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  };
}
