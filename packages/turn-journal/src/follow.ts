import type { TurnEventEnvelope } from "@bridgeworks/protocol";
import type { JournalEvents } from "./events.js";

export interface FollowHandle {
  /** The index of the next event this follower will deliver. */
  readonly nextIndex: number;
  readonly closed: boolean;
  close(): void;
}

/** What a follower reads: a journal's events area, or any source of committed events like it. */
export type FollowSource = Pick<JournalEvents, "readEvents" | "subscribe">;

export interface FollowOptions {
  /** Events read per page of a replay (500). */
  pageSize?: number;
  /**
   * Awaited between two full pages of a replay: the replay reads one page, delivers it, awaits
   * `pause()`, reads on (what was committed meanwhile included). A follower from the start of a long turn
   * then never holds its caller's thread for all of it. Without it the whole replay is read at once. A
   * rejection closes the follower; so does an `onEvents` that throws after a pause (the error is rethrown
   * in a microtask: nobody else could hear it).
   */
  pause?: () => Promise<void>;
}

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
  { pageSize = 500, pause }: FollowOptions = {},
): FollowHandle {
  let nextIndex = fromIndex;
  let closed = false;
  let pumping = false;
  let wokenWhilePumping = false;
  /** A stepped replay awaits `pause()`: commits made meanwhile are read when it goes on. */
  let pausing = false;

  const pump = (_turnId?: string, committed?: readonly TurnEventEnvelope[]) => {
    if (pausing) return;
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
          if (pause !== undefined && page.length === pageSize && !closed) {
            pausing = true;
            pause().then(goOn, close);
            return;
          }
        }
      } while (wokenWhilePumping && !closed);
    } finally {
      pumping = false;
    }
  };

  const goOn = () => {
    pausing = false;
    try {
      pump();
    } catch (error) {
      // No caller to throw to: as a subscriber's error would, it surfaces, and this follower ends.
      close();
      queueMicrotask(() => {
        throw error;
      });
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
