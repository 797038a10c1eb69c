import type { ActionPage, ActionRecord, Cursor } from "@bridgeworks/protocol";
import { BoardError } from "./errors.js";

/**
 * Which changes wake a listener: `claimable`, only those that make an action claimable (a post, a
 * release); `every`, every change to an action or to the board's identities.
 */
export type ChangeScope = "claimable" | "every";

/** Tells subscribers the board may have changed, with its latest position when known. */
export interface ChangeSource {
  subscribe(listener: (head?: number) => void, scope?: ChangeScope): () => void;
}

/** What one look at the board found after a position, and the position to look after next time. */
export interface Scan {
  records: ActionRecord[];
  position: number;
  /**
   * Look again after this many milliseconds even if nothing is announced (the next lease to lapse);
   * undefined: only announcements wake the wait.
   */
  lookAgainInMs?: number | undefined;
  /** Settle with this scan even without records (a live view's agents changed). */
  settle?: boolean | undefined;
}

export interface WaitForRecordsInput {
  start: number;
  scan: (after: number) => Scan | Promise<Scan>;
  changes: ChangeSource;
  /** Which changes wake the wait; `claimable` by default. */
  scope?: ChangeScope | undefined;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  /** Aborts when the board closes. */
  closing: AbortSignal;
  cursorAt: (position: number) => Cursor;
}

// A lease that lapses is looked at a little after its expiry, so the sweep finds it lapsed.
const lapseMarginMs = 5;
// Never look again sooner than this: a sweep that could not end a lapsed lease must not spin.
const minLookAgainMs = 50;

/**
 * Scans now, after every change and when the next lease lapses, until records turn up, the timeout
 * passes, the caller aborts or the board closes. Scans only read (a lapsed lease is swept by a write
 * of its own), so an abort at any point leaves nothing consumed.
 */
export function waitForRecords(input: WaitForRecordsInput): Promise<ActionPage> {
  const { scan, changes, timeoutMs, signal, closing, cursorAt } = input;
  return new Promise<ActionPage>((resolve, reject) => {
    let position = input.start;
    let settled = false;
    let scanning = false;
    let rescan = false;
    let lookAgain: NodeJS.Timeout | undefined;

    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(lookAgain);
      unsubscribe();
      signal?.removeEventListener("abort", onAbort);
      closing.removeEventListener("abort", onClosing);
      settle();
    };
    const onAbort = () => finish(() => reject(signal?.reason));
    const onClosing = () =>
      finish(() => reject(new BoardError("closed", "the board was closed during the wait")));

    const look = async () => {
      if (settled) return;
      if (scanning) {
        rescan = true;
        return;
      }
      scanning = true;
      try {
        do {
          rescan = false;
          const found = await scan(position);
          if (settled) return;
          position = found.position;
          if (found.records.length > 0 || found.settle === true) {
            const page = { records: found.records, cursor: cursorAt(position) };
            finish(() => resolve(page));
            return;
          }
          clearTimeout(lookAgain);
          lookAgain =
            found.lookAgainInMs === undefined
              ? undefined
              : setTimeout(() => void look(), Math.max(minLookAgainMs, found.lookAgainInMs + lapseMarginMs));
        } while (rescan);
      } catch (error) {
        finish(() => reject(error));
      } finally {
        scanning = false;
      }
    };

    const timer = setTimeout(
      () => finish(() => resolve({ records: [], cursor: cursorAt(position) })),
      timeoutMs,
    );
    const unsubscribe = changes.subscribe((head) => {
      if (input.scope === "every" || head === undefined || head > position) void look();
    }, input.scope ?? "claimable");
    signal?.addEventListener("abort", onAbort, { once: true });
    closing.addEventListener("abort", onClosing, { once: true });
    if (signal?.aborted) onAbort();
    else if (closing.aborted) onClosing();
    else void look();
  });
}
