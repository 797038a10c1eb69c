import type { Clock } from "./clock.js";
import { type DeadlinePhase, type LedgerDeadlines, phaseDurationMs } from "./deadlines.js";
import type { Entry } from "./ledger-entry.js";
import type { ContextMessage } from "./types.js";

/**
 * Every live call waits with a deadline: the one of the state it waits in (`deadlines.ts`), armed
 * when it enters that state and kept while it stays there. `onExpire` hears a deadline that ran out.
 */
export class EntryDeadlines<M extends ContextMessage> {
  readonly #clock: Clock;
  readonly #deadlines: LedgerDeadlines;
  readonly #streamOpen: () => boolean;
  readonly #onExpire: (entry: Entry<M>, phase: DeadlinePhase) => void;

  constructor(options: {
    clock: Clock;
    deadlines: LedgerDeadlines;
    streamOpen: () => boolean;
    onExpire: (entry: Entry<M>, phase: DeadlinePhase) => void;
  }) {
    this.#clock = options.clock;
    this.#deadlines = options.deadlines;
    this.#streamOpen = options.streamOpen;
    this.#onExpire = options.onExpire;
  }

  /** The waiting state a live entry is in, for its deadline; undefined once it settled. */
  phaseOf(entry: Entry<M>): DeadlinePhase | undefined {
    if (entry.settled) return undefined;
    if (entry.queued !== undefined) return "queued";
    switch (entry.progress) {
      case "unseen":
        return this.#streamOpen() ? "stranded_streaming" : "stranded";
      case "emitted":
        return "emitted";
      case "undelivered":
        return "undelivered";
      case "forwarded":
        return entry.missing ? "missing" : "executing";
    }
  }

  /** Arms the deadline of the entry's current waiting state; a state it already waits in keeps its own. */
  rearm(entry: Entry<M>): void {
    const phase = this.phaseOf(entry);
    if (entry.deadline?.phase === phase) return;
    const previous = entry.deadline;
    this.clear(entry);
    if (phase === undefined) return;
    const now = this.#clock.now();
    let at = now + phaseDurationMs(phase, this.#deadlines);
    // Learning that the result is missing only ever shortens the wait.
    if (phase === "missing" && previous && previous.at < at) at = previous.at;
    const handle = this.#clock.setTimeout(() => this.#onExpire(entry, phase), at - now);
    entry.deadline = { phase, since: now, at, handle };
  }

  clear(entry: Entry<M>): void {
    if (!entry.deadline) return;
    this.#clock.clearTimeout(entry.deadline.handle);
    entry.deadline = undefined;
  }
}
