import { BackendEvent, type TurnEventEnvelope } from "@bridgeworks/protocol";
import { JournalError, parseInput } from "./errors.js";
import { JournalArea } from "./journal-area.js";
import { toEventEnvelope } from "./rows.js";
import type { TurnListener } from "./subscribers.js";

export const defaultMaxReadEvents = 1000;

/**
 * A turn's events: appended by its CLI's stream (batched), read back committed, and heard of after each
 * commit. `followTurn` (follow.ts) replays and tails them with these.
 */
export class JournalEvents extends JournalArea {
  /**
   * Buffers stream events of a spawning, running or awaiting_secret turn. An event that proves a new
   * effect, or `backend.started`, commits at once with everything buffered before it; the rest commits
   * when the batch is full or old enough. Only committed events are visible to readers. `through`: a
   * kept CLI's stdout position after the line they came from, committed with them (`stdoutThrough`).
   */
  appendEvents(turnId: string, events: readonly BackendEvent[], through?: number): void {
    if (events.length === 0) return;
    const valid = events.map((event, index) => parseInput(BackendEvent, event, `events[${index}]`));
    if (through !== undefined && (!Number.isSafeInteger(through) || through < 0)) {
      throw new JournalError("invalid_input", `through: must be a non-negative integer, got ${through}`);
    }
    this.buffer.append(turnId, valid, through);
  }

  /** Commits buffered events now. On failure they stay buffered and the error is thrown. */
  flush(): void {
    this.buffer.flush();
  }

  /** Committed events of a turn from `fromIndex` on, at most `limit` of them, in index order. */
  readEvents(turnId: string, fromIndex = 0, limit = defaultMaxReadEvents): TurnEventEnvelope[] {
    if (!Number.isInteger(fromIndex) || fromIndex < 0) {
      throw new JournalError("invalid_input", `fromIndex: must be a non-negative integer, got ${fromIndex}`);
    }
    if (!Number.isInteger(limit) || limit < 1) {
      throw new JournalError("invalid_input", `limit: must be a positive integer, got ${limit}`);
    }
    return this.connection.sql.events.all(turnId, fromIndex, limit).map(toEventEnvelope);
  }

  /**
   * Hands `listener` the events of every turn as they commit (each commit's events once, after the
   * commit; none that rolled back, none committed before the call): for a watcher of moments across
   * turns. It runs inside the writer's call: it must be quick and must not write to the journal.
   */
  subscribeAll(listener: (turnId: string, committed: readonly TurnEventEnvelope[]) => void): () => void {
    return this.connection.feed.subscribeEvents(listener);
  }

  /** Wakes `listener` with the turn id, and the events committed, after every commit that adds events to that turn. */
  subscribe(turnId: string, listener: TurnListener): () => void {
    return this.connection.feed.subscribeTurn(turnId, listener);
  }
}
