import type { ActionPage, ActionRecord, Cursor } from "@bridgeworks/protocol";
import { BoardError } from "./errors.js";

/** Tells subscribers the board may have changed, with its latest position when known. */
export interface ChangeSource {
  subscribe(listener: (head?: number) => void): () => void;
}

/** What one look at the board found after a position, and the position to look after next time. */
export interface Scan {
  records: ActionRecord[];
  position: number;
}

export interface WaitForRecordsInput {
  start: number;
  scan: (after: number) => Scan | Promise<Scan>;
  changes: ChangeSource;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  /** Aborts when the board closes. */
  closing: AbortSignal;
  cursorAt: (position: number) => Cursor;
}

/**
 * Scans now and after every change until records turn up, the timeout passes, the caller aborts or
 * the board closes. Scans only read, so an abort at any point leaves nothing consumed.
 */
export function waitForRecords(input: WaitForRecordsInput): Promise<ActionPage> {
  const { scan, changes, timeoutMs, signal, closing, cursorAt } = input;
  return new Promise<ActionPage>((resolve, reject) => {
    let position = input.start;
    let settled = false;
    let scanning = false;
    let rescan = false;

    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
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
          if (found.records.length > 0) {
            const page = { records: found.records, cursor: cursorAt(position) };
            finish(() => resolve(page));
            return;
          }
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
      if (head === undefined || head > position) void look();
    });
    signal?.addEventListener("abort", onAbort, { once: true });
    closing.addEventListener("abort", onClosing, { once: true });
    if (signal?.aborted) onAbort();
    else if (closing.aborted) onClosing();
    else void look();
  });
}
