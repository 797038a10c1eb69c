import {
  type FlootMoment,
  mayHaveRunErrorCode,
  type TurnEventEnvelope,
  type TurnRecord,
} from "@bridgeworks/protocol";
import { describeError, type Logger } from "@bridgeworks/runtime";
import type { TurnJournal } from "@bridgeworks/turn-journal";

export type MomentListener = (moment: FlootMoment) => void;

/** Where moments are heard: the change stream's hub and the notify command subscribe here. */
export interface MomentSource {
  subscribe(listener: MomentListener): () => void;
}

/**
 * The moments a person may want to hear of, from the journal's own events as they commit: a
 * `permission.requested` (an approval), a `secret.requested`, a `terminal` (a turn ended; not one a
 * replay carries on; a `decision` when it ended waiting on one, `may_have_run`). Each is heard once,
 * live: nothing committed before a listener subscribed, so a restart announces no request again. What
 * the start's own recovery ended (a turn interrupted, or waiting on a decision) is announced once to
 * the listeners there are once the daemon is up (`announceEnded`).
 */
export class Moments implements MomentSource {
  readonly #journal: Pick<TurnJournal, "events" | "turns">;
  readonly #logger: Logger;
  readonly #listeners = new Set<MomentListener>();
  #unsubscribe: (() => void) | undefined;
  #origin = "http://127.0.0.1";

  constructor(journal: Pick<TurnJournal, "events" | "turns">, logger: Logger) {
    this.#journal = journal;
    this.#logger = logger;
  }

  /** The web UI's port, for each moment's link. */
  linkTo(port: number): void {
    this.#origin = `http://127.0.0.1:${port}`;
  }

  subscribe(listener: MomentListener): () => void {
    const entry: MomentListener = (moment) => listener(moment);
    this.#listeners.add(entry);
    this.#unsubscribe ??= this.#journal.events.subscribeAll((turnId, committed) =>
      this.#hear(turnId, committed),
    );
    return () => {
      this.#listeners.delete(entry);
      if (this.#listeners.size > 0) return;
      this.#unsubscribe?.();
      this.#unsubscribe = undefined;
    };
  }

  /** Announces the end each of `turnIds` was given (its terminal event), as if it were heard now. */
  announceEnded(turnIds: readonly string[]): void {
    for (const turnId of turnIds) {
      const turn = this.#journal.turns.getTurn(turnId);
      if (turn === undefined || turn.eventCount === 0) continue;
      this.#hear(turnId, this.#journal.events.readEvents(turnId, turn.eventCount - 1, 1));
    }
  }

  close(): void {
    this.#listeners.clear();
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  #hear(turnId: string, committed: readonly TurnEventEnvelope[]): void {
    let turn: TurnRecord | undefined;
    for (const envelope of committed) {
      if (!isMomentEvent(envelope)) continue;
      turn ??= this.#journal.turns.getTurn(turnId);
      if (!turn) return;
      const moment = momentOf(turn, envelope, `${this.#origin}/#/s/${encodeURIComponent(turn.sessionId)}`);
      if (!moment) continue;
      for (const listener of [...this.#listeners]) {
        try {
          listener(moment);
        } catch (error) {
          this.#logger.error("a moment's listener threw", { error: describeError(error) });
        }
      }
    }
  }
}

const momentTypes = new Set(["permission.requested", "secret.requested", "terminal"]);

function isMomentEvent({ event }: TurnEventEnvelope): boolean {
  return momentTypes.has(event.type);
}

/** The moment an event is, if it is one; `summary` is one line of at most about 200 characters. */
export function momentOf(
  turn: TurnRecord,
  { event, at }: TurnEventEnvelope,
  url: string,
): FlootMoment | undefined {
  const base = { session: turn.sessionId, turn: turn.id, url, at };
  switch (event.type) {
    case "permission.requested":
      return {
        kind: "approval",
        ...base,
        request: event.requestId,
        summary: oneLine(`Approve ${event.toolName}: ${event.inputSummary}`),
      };
    case "secret.requested":
      return {
        kind: "secret",
        ...base,
        request: event.requestId,
        summary: oneLine(`Secret asked: ${event.name}${event.prompt ? ` (${event.prompt})` : ""}`),
      };
    case "terminal":
      if (event.continuedBy !== undefined) return undefined;
      if (event.error?.code === mayHaveRunErrorCode)
        return {
          kind: "decision",
          ...base,
          outcome: event.outcome,
          summary: oneLine(`Turn ${turn.seq} waits on you: ${event.error.message}`),
        };
      return {
        kind: "turn_ended",
        ...base,
        outcome: event.outcome,
        summary: oneLine(
          `Turn ${turn.seq} ${event.outcome}${event.error ? ` (${event.error.code})` : ""}: ${turn.input.prompt}`,
        ),
      };
    default:
      return undefined;
  }
}

const summaryLength = 200;

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= summaryLength ? flat : `${flat.slice(0, summaryLength - 1)}…`;
}
