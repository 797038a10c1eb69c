const closingKey = Symbol.for("@bridgeworks/pi-provider/closing-queries");

type ClosingStore = { [closingKey]?: Set<Promise<void>> };

function closingSet(): Set<Promise<void>> {
  const store = globalThis as ClosingStore;
  store[closingKey] ??= new Set();
  return store[closingKey];
}

/**
 * The second documented global: Claude Code processes of Pi sessions that were replaced (`/new`,
 * `/resume`, `/fork`, reload) and are still exiting. Pi loads a new extension instance for the next
 * session, so the instance that will wait for them at Pi's quit is not the one that started them.
 */
export function closeInBackground(closing: Promise<void>): void {
  const set = closingSet();
  const tracked: Promise<void> = closing.catch(() => undefined).finally(() => set.delete(tracked));
  set.add(tracked);
}

/** Resolves once every Claude Code handed to `closeInBackground` in this Pi process has exited. */
export async function backgroundClosed(): Promise<void> {
  const set = closingSet();
  while (set.size > 0) await Promise.allSettled([...set]);
}
