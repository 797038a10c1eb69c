import type { BackendEvent } from "@bridgeworks/protocol";
import type { JournalConnection } from "./connection.js";
import { effectBitsOf } from "./effects.js";
import { JournalError } from "./errors.js";
import type { BatchPolicy } from "./options.js";
import { acceptsEvents } from "./phases.js";
import type { TimedEvent, TurnWrites } from "./turn-writes.js";

interface PendingEvent extends TimedEvent {
  turnId: string;
}

function groupByTurn(batch: readonly PendingEvent[]): Map<string, PendingEvent[]> {
  const byTurn = new Map<string, PendingEvent[]>();
  for (const pending of batch) {
    const events = byTurn.get(pending.turnId);
    if (events) events.push(pending);
    else byTurn.set(pending.turnId, [pending]);
  }
  return byTurn;
}

/**
 * Stream events waiting for their commit: a batch commits when it is full, old enough, or holds an
 * event proving a new effect (at once, with `synchronous`) or `backend.started`; every journal-owned
 * write commits it first. With a `streamCut`, the end of a turn's streamed text that may not be
 * journaled yet is held apart until the turn's next event or transition.
 */
export class EventBuffer {
  readonly #connection: JournalConnection;
  readonly #writes: TurnWrites;
  readonly #batch: BatchPolicy;
  readonly #streamCut: ((text: string) => number) | undefined;
  readonly #onError: (error: unknown) => void;
  #pending: PendingEvent[] = [];
  #pendingEffects = new Map<string, number>();
  #pendingSince: number | undefined;
  #flushTimer: unknown;
  /** Per turn, the streamed text `streamCut` held back. */
  readonly #held = new Map<string, string>();

  constructor(
    connection: JournalConnection,
    writes: TurnWrites,
    options: {
      batch: BatchPolicy;
      streamCut: ((text: string) => number) | undefined;
      onError: (error: unknown) => void;
    },
  ) {
    this.#connection = connection;
    this.#writes = writes;
    this.#batch = options.batch;
    this.#streamCut = options.streamCut;
    this.#onError = options.onError;
  }

  /** Buffers validated stream events of a live turn (see `JournalEvents.appendEvents`). */
  append(turnId: string, events: readonly BackendEvent[], through?: number): void {
    const known = this.#knownEffects(turnId);
    const admitted = this.#streamCut === undefined ? events : this.#hold(turnId, events, this.#streamCut);
    this.#push(turnId, admitted, known, through);
  }

  /** Buffers the text held back for a turn, if any, as it is: the turn is about to change. */
  release(turnId: string): void {
    const held = this.#held.get(turnId);
    if (held === undefined) return;
    const known = this.#knownEffects(turnId);
    this.#held.delete(turnId);
    this.#push(turnId, [{ type: "assistant.delta", text: held }], known);
  }

  /** Commits buffered events now. On failure they stay buffered and the error is thrown. */
  flush(): void {
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    const touched = this.#connection.transaction(() => {
      const byTurn = groupByTurn(batch);
      for (const [turnId, pending] of byTurn) {
        const turn = this.#connection.sql.turnPhase.get(turnId);
        if (!turn) throw new JournalError("turn_not_found", `turn ${turnId} does not exist`);
        if (!acceptsEvents(turn.phase)) {
          throw new JournalError(
            "not_accepting_events",
            `turn ${turnId} is ${turn.phase}; buffered events refused`,
          );
        }
        this.#writes.writeStream(turn, pending);
      }
      return [...byTurn.keys()];
    });
    this.#pending = [];
    this.#pendingEffects.clear();
    this.#pendingSince = undefined;
    this.#stopTimer();
    this.#connection.feed.notify(touched);
  }

  /** Buffered events without a new effect, at `streamSynchronous` (a new effect flushes with `synchronous`). */
  flushStream(): void {
    if (this.#pending.length === 0) return;
    this.#connection.withSynchronous(this.#connection.streamSynchronous, () => this.flush());
  }

  /** The journal closes: no timer is left behind (what is buffered was flushed or is lost with it). */
  close(): void {
    this.#stopTimer();
  }

  /** The effects a live turn has recorded or buffered; a turn that takes no events is refused. */
  #knownEffects(turnId: string): number {
    // A turn with buffered events was checked when they came, and every phase change flushes first: no
    // read per event (flush checks again, and the store's triggers refuse events of an ended turn).
    const known = this.#pendingEffects.get(turnId);
    if (known !== undefined) return known;
    const turn = this.#connection.sql.turnPhase.get(turnId);
    if (!turn) throw new JournalError("turn_not_found", `turn ${turnId} does not exist`);
    if (!acceptsEvents(turn.phase)) {
      throw new JournalError(
        "not_accepting_events",
        `turn ${turnId} is ${turn.phase}; only spawning, running or awaiting_secret turns take events`,
      );
    }
    return turn.effects;
  }

  /**
   * Buffers one turn's events. An event that proves a new effect commits at once with everything
   * buffered before it (`synchronous`); `backend.started`, a full batch or an old one at
   * `streamSynchronous`; otherwise the flush timer will.
   */
  #push(turnId: string, events: readonly BackendEvent[], knownEffects: number, through?: number): void {
    if (events.length === 0) return;
    let known = knownEffects;
    const now = this.#connection.clock.now();
    let newEffect = false;
    let started = false;
    for (const event of events) {
      const bits = effectBitsOf(event);
      if ((bits & ~known) !== 0) newEffect = true;
      if (event.type === "backend.started") started = true;
      known |= bits;
      this.#pending.push({ turnId, at: now, event });
    }
    if (through !== undefined) this.#pending[this.#pending.length - 1]!.through = through;
    this.#pendingEffects.set(turnId, known);
    this.#pendingSince ??= now;
    const full = this.#pending.length >= this.#batch.maxEvents;
    const old = this.#batch.maxDelayMs > 0 && now - this.#pendingSince >= this.#batch.maxDelayMs;
    if (newEffect) this.flush();
    else if (started || full || old) this.flushStream();
    else this.#scheduleFlush();
  }

  /**
   * The events to buffer now: each delta joined to the text held before it, cut where `streamCut`
   * says, the rest held; any other event first releases what is held, as a delta before it.
   */
  #hold(
    turnId: string,
    events: readonly BackendEvent[],
    streamCut: (text: string) => number,
  ): BackendEvent[] {
    const out: BackendEvent[] = [];
    for (const event of events) {
      const held = this.#held.get(turnId);
      if (event.type !== "assistant.delta") {
        this.#held.delete(turnId);
        if (held !== undefined) out.push({ type: "assistant.delta", text: held });
        out.push(event);
        continue;
      }
      const text = (held ?? "") + event.text;
      const cut = streamCut(text);
      if (cut < text.length) this.#held.set(turnId, text.slice(cut));
      else this.#held.delete(turnId);
      if (cut > 0) out.push({ type: "assistant.delta", text: text.slice(0, cut) });
    }
    return out;
  }

  #scheduleFlush(): void {
    if (this.#flushTimer !== undefined) return;
    const { clock } = this.#connection;
    this.#flushTimer = clock.setTimeout(() => {
      this.#flushTimer = undefined;
      if (!this.#connection.open) return;
      try {
        this.flushStream();
      } catch (error) {
        this.#onError(error);
      }
    }, this.#batch.maxDelayMs);
  }

  #stopTimer(): void {
    if (this.#flushTimer !== undefined) this.#connection.clock.clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
  }
}
