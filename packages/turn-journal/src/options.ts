import type { TurnEvent } from "@bridgeworks/protocol";
import type { Clock } from "./clock.js";
import { JournalError } from "./errors.js";

/**
 * Stream events wait in memory until `maxEvents` are buffered or the oldest is `maxDelayMs` old.
 * `maxDelayMs: 0` commits what one turn of the event loop appended once that turn has run its I/O
 * callbacks (the clock's `setTimeout(0)`): one commit for the lines of every CLI read in that turn.
 */
export interface BatchPolicy {
  maxEvents: number;
  maxDelayMs: number;
}

export const defaultBatchPolicy: BatchPolicy = { maxEvents: 256, maxDelayMs: 50 };

/**
 * `FULL` (the default) fsyncs the WAL at every commit, so a committed phase change or effect survives a
 * power loss or kernel crash, not only a crash of the daemon: forgetting a committed `tool_started` would
 * let recovery replay a tool call. Phase changes are a handful per turn and stream events are batched,
 * so the fsyncs are cheap. `NORMAL` survives process crashes only; benches use it to show the cost.
 */
export type Synchronous = "FULL" | "NORMAL";

/**
 * What the journal does to every event on its way in (floot masks submitted secrets with it). `event`
 * runs once per event, inside the commit that writes it, on the one path every event takes: stream
 * events, the events the journal makes of a transition, a tool admission, a secret or permission
 * request and a decision. A draft's text kept in a row besides its event (a secret's prompt, a
 * permission request's summary and rules, a decision's rule and message, a turn's error) is kept as the
 * transformed event shows it, even when no event is written. It must keep the event's type and every
 * field that is not text (ids, names, statuses, flags), and be pure: a rolled-back commit runs it again.
 */
export interface EventTransform {
  event<Event extends TurnEvent>(event: Event): Event;
  /**
   * How many leading characters of a turn's streamed text (`assistant.delta`, what was held before
   * included) may be journaled now; the rest is held until the turn's next appended event or its next
   * transition, which journal it first. Without it nothing is held.
   */
  streamCut?(text: string): number;
}

export interface JournalOptions {
  /** The SQLite file; its directory must exist. `-wal` and `-shm` files live beside it. */
  path: string;
  clock?: Clock;
  /** Mints session, turn and secret-request ids; UUIDv7 from `clock` by default. */
  newId?: () => string;
  batch?: Partial<BatchPolicy>;
  synchronous?: Synchronous;
  /**
   * How a commit of stream events alone (no new effect), `backend.started` and the process phases
   * (`spawning`, `running`) is made durable; `synchronous` unless set. `NORMAL` lets the daemon commit
   * them without an fsync each: they survive a crash of the process, and the next `FULL` commit (an
   * effect, another phase, a gate admission) fsyncs them.
   */
  streamSynchronous?: Synchronous;
  /**
   * Who copies the WAL back into the database file. `inline` (the default): SQLite, in the commit that
   * crosses 1,000 WAL pages, which then waits for the copy and the file's fsync. `worker`: a worker
   * thread with a connection of its own (`startWalCheckpointer`: every 256 commits and 1 s after the
   * last; it starts 1 s after the first commit), so no commit waits for a checkpoint. SQLite's inline
   * checkpoint stays as a backstop at 10,000 pages, and is back at 1,000 if the worker fails.
   */
  checkpoint?: "inline" | "worker";
  /** Applied to every event on its way in; none by default. */
  transform?: EventTransform;
  /** Hears failures nobody else can: a background flush, a subscriber that threw, a failed checkpointer. */
  onError?: (error: unknown) => void;
}

const synchronousModes: readonly Synchronous[] = ["FULL", "NORMAL"];
const checkpointModes: readonly unknown[] = ["inline", "worker"];

/** The durability modes, checked: a bad one is refused naming the option. */
export function durabilityModes(options: JournalOptions): {
  synchronous: Synchronous;
  streamSynchronous: Synchronous;
} {
  const synchronous = options.synchronous ?? "FULL";
  const streamSynchronous = options.streamSynchronous ?? synchronous;
  for (const [name, mode] of [
    ["synchronous", synchronous],
    ["streamSynchronous", streamSynchronous],
  ] as const) {
    if (!synchronousModes.includes(mode)) {
      throw new JournalError("invalid_input", `${name}: must be FULL or NORMAL, got ${String(mode)}`);
    }
  }
  if (options.checkpoint !== undefined && !checkpointModes.includes(options.checkpoint)) {
    throw new JournalError(
      "invalid_input",
      `checkpoint: must be inline or worker, got ${String(options.checkpoint)}`,
    );
  }
  return { synchronous, streamSynchronous };
}
