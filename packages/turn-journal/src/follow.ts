import type { TurnEventEnvelope } from "@bridgeworks/protocol";
import type { TurnJournal } from "./journal.js";

export interface FollowHandle {
  /** The index of the next event this follower will deliver. */
  readonly nextIndex: number;
  readonly closed: boolean;
  close(): void;
}

export type FollowSource = Pick<TurnJournal, "readEvents" | "subscribe">;

/**
 * Delivers a turn's committed events from `fromIndex` on, then every later commit, in index order with
 * no gap and no duplicate; stops by itself after the terminal event. A follower never owns the turn:
 * closing it (or losing it on a UI refresh) changes nothing in the journal.
 */
export function followTurn(
  journal: FollowSource,
  turnId: string,
  fromIndex: number,
  onEvents: (events: TurnEventEnvelope[]) => void,
  pageSize = 500,
): FollowHandle {
  let nextIndex = fromIndex;
  let closed = false;
  let pumping = false;
  let wokenWhilePumping = false;

  const pump = (_turnId?: string, committed?: readonly TurnEventEnvelope[]) => {
    // A commit made by `onEvents` itself wakes us re-entrantly: loop again instead of nesting.
    if (pumping) {
      wokenWhilePumping = true;
      return;
    }
    pumping = true;
    try {
      // Live tail: the commit's own events, when they continue exactly where this follower is.
      if (committed !== undefined && committed[0]?.index === nextIndex && !closed) {
        const last = committed.at(-1)!;
        nextIndex = last.index + 1;
        if (last.event.type === "terminal") close();
        onEvents([...committed]);
        if (!wokenWhilePumping) return;
      }
      do {
        wokenWhilePumping = false;
        while (!closed) {
          const page = journal.readEvents(turnId, nextIndex, pageSize);
          const last = page.at(-1);
          if (!last) break;
          nextIndex = last.index + 1;
          if (last.event.type === "terminal") close();
          onEvents(page);
        }
      } while (wokenWhilePumping && !closed);
    } finally {
      pumping = false;
    }
  };

  // Subscribe before the first read: a commit in between would otherwise go unnoticed.
  const unsubscribe = journal.subscribe(turnId, pump);
  function close() {
    closed = true;
    unsubscribe();
  }
  pump();

  return {
    get nextIndex() {
      return nextIndex;
    },
    get closed() {
      return closed;
    },
    close,
  };
}
