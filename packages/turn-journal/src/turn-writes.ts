import {
  type CliProcess,
  isTerminalTurnPhase,
  JournalId,
  type SpawnMarker,
  type TurnError,
  type TurnEvent,
  type TurnInput,
  type TurnPhase,
} from "@bridgeworks/protocol";
import { isoTime } from "./clock.js";
import type { JournalConnection } from "./connection.js";
import { effectBitsOf } from "./effects.js";
import { JournalError } from "./errors.js";
import { EventInserter } from "./event-insert.js";
import type { EventTransform } from "./options.js";
import { bridgeGeneration, requireSession } from "./records.js";
import type { TurnRow } from "./rows.js";
import type { TurnInsert, TurnState } from "./statements.js";

export interface TurnChanges {
  phase?: TurnPhase;
  events?: readonly TurnEvent[];
  conversationId?: string | undefined;
  spawnMarker?: SpawnMarker | undefined;
  process?: CliProcess | undefined;
  error?: TurnError | undefined;
  /** Stamp the current bridge generation (the turn is about to mount a bridge). */
  stampGeneration?: boolean;
  /** The replay that carries on an interrupted turn, named in its terminal event. */
  continuedBy?: string;
}

/** An event with the time it was journaled at (epoch ms). */
export interface TimedEvent {
  at: number;
  event: TurnEvent;
  /** A kept CLI's stdout position after the line this event came from. */
  through?: number;
}

/**
 * The one path every event takes into the journal, inside its caller's transaction: each event passes
 * the journal's `EventTransform` exactly once (`prepare`), gets the next index of its turn, and is noted
 * for the turn's subscribers; the turn row takes the effects it proves. Turns are inserted and changed
 * here too, since each of those writes events.
 */
export class TurnWrites {
  readonly #connection: JournalConnection;
  readonly #inserter: EventInserter;
  readonly #transform: EventTransform | undefined;
  /** Events `prepare` made: written as they are, never transformed twice. */
  readonly #prepared = new WeakSet<TurnEvent>();

  constructor(connection: JournalConnection, transform: EventTransform | undefined) {
    this.#connection = connection;
    this.#inserter = new EventInserter(connection.db);
    this.#transform = transform;
  }

  /**
   * The event as the journal writes it. A caller that keeps a draft's text in a row besides (a secret's
   * prompt, a decision's rule) takes it from here, then writes this very event: it is not transformed
   * again.
   */
  prepare<Event extends TurnEvent>(event: Event): Event {
    if (this.#transform === undefined || this.#prepared.has(event)) return event;
    const prepared = this.#transform.event(event);
    if (prepared.type !== event.type) {
      throw new JournalError("invalid_input", `the event transform changed a ${event.type} event's type`);
    }
    // One left as it was may be prepared again: a transform that changed nothing has nothing to redo.
    if (prepared !== event) this.#prepared.add(prepared);
    return prepared;
  }

  /** Inserts a turn with its first phase event; a stopped session takes none. */
  insertTurn(
    sessionId: string,
    input: TurnInput,
    lineage: Pick<TurnInsert, "attempt" | "replayOf" | "retryOf"> & Partial<Pick<TurnInsert, "continues">>,
    id = this.#connection.newId(),
  ): string {
    const { sql, clock, feed } = this.#connection;
    const session = requireSession(this.#connection, sessionId);
    if (session.status === "stopped") {
      throw new JournalError("session_stopped", `session ${sessionId} is stopped; it takes no new turn`);
    }
    // A replay or a continuation takes its predecessor's place at once; any other turn waits behind
    // the queue, if there is one.
    const takesItsPlace = lineage.replayOf !== null || (lineage.continues ?? null) !== null;
    const mustWait = session.activeTurnId !== undefined || (!takesItsPlace && session.queuedTurns > 0);
    const phase = mustWait ? "queued" : "accepted";
    const now = clock.now();
    sql.insertTurn.run({
      id: JournalId.parse(id),
      sessionId,
      seq: sql.nextSeq.get(sessionId) ?? 1,
      input: JSON.stringify(input),
      phase,
      continues: null,
      ...lineage,
      generation: bridgeGeneration(this.#connection),
      now,
    });
    this.#writeEvents(id, [{ at: now, event: { type: "phase", phase } }]);
    sql.setSessionTitle.run(input.prompt.slice(0, 200), sessionId);
    feed.sessionChanged(sessionId);
    return id;
  }

  /**
   * Applies one change to a turn inside the caller's transaction: appends `events`, then, when the phase
   * changes, the closing of pending secret and permission requests (on ending) and the phase or terminal
   * event; then updates the row, effects included. The row keeps the error as the terminal event shows it.
   */
  changeTurn(turn: TurnRow, changes: TurnChanges): void {
    const { sql, clock, feed } = this.#connection;
    const now = clock.now();
    const events: TurnEvent[] = [...(changes.events ?? [])];
    const phase = changes.phase ?? turn.phase;
    let error = changes.error;
    let errorShown = false;
    if (changes.phase !== undefined && changes.phase !== turn.phase) {
      feed.sessionChanged(turn.session_id);
      if (isTerminalTurnPhase(changes.phase)) {
        const closedAs = changes.phase === "interrupted" ? "orphaned" : "cancelled";
        events.push(...this.#closeSecretRequests(turn.id, closedAs));
        events.push(...this.#closePermissionRequests(turn.id, closedAs));
        const terminal = this.prepare<TurnEvent>({
          type: "terminal",
          outcome: changes.phase,
          ...(error && { error }),
          ...(changes.continuedBy !== undefined && { continuedBy: changes.continuedBy }),
        });
        if (terminal.type === "terminal") error = terminal.error;
        errorShown = true;
        events.push(terminal);
      } else {
        events.push({ type: "phase", phase: changes.phase });
      }
    }
    if (error !== undefined && !errorShown) error = this.#preparedError(error);
    const written = this.#writeEvents(
      turn.id,
      events.map((event) => ({ at: now, event })),
    );
    const conversationId = changes.conversationId ?? written.conversationId;
    sql.updateTurn.run({
      id: turn.id,
      phase,
      effects: turn.effects | written.effects,
      conversationId: conversationId ?? null,
      spawnMarker: changes.spawnMarker ?? null,
      pid: changes.process?.pid ?? null,
      startTime: changes.process?.startTime ?? null,
      errorCode: error?.code ?? null,
      errorMessage: error?.message ?? null,
      generation: changes.stampGeneration ? bridgeGeneration(this.#connection) : null,
      now,
      endedAt: isTerminalTurnPhase(phase) && phase !== turn.phase ? now : null,
    });
    if (conversationId !== undefined) sql.setSessionConversation.run(conversationId, turn.session_id);
  }

  /** Buffered stream events of one turn: events, effects and conversation id in the caller's transaction. */
  writeStream(turn: TurnState, pending: readonly TimedEvent[]): void {
    const { sql, clock } = this.#connection;
    const written = this.#writeEvents(turn.id, pending);
    let stdoutThrough: number | null = null;
    for (const { through } of pending) if (through !== undefined) stdoutThrough = through;
    sql.updateTurnStream.run({
      id: turn.id,
      effects: turn.effects | written.effects,
      conversationId: written.conversationId ?? null,
      stdoutThrough,
      now: clock.now(),
    });
    if (written.conversationId !== undefined) {
      sql.setSessionConversation.run(written.conversationId, turn.session_id);
    }
  }

  #writeEvents(
    turnId: string,
    timed: readonly TimedEvent[],
  ): { effects: number; conversationId: string | undefined } {
    const events =
      this.#transform === undefined
        ? timed
        : timed.map(({ at, event }) => ({ at, event: this.prepare(event) }));
    let index = this.#connection.sql.nextEventIndex.get(turnId) ?? 0;
    let effects = 0;
    let conversationId: string | undefined;
    const committed = this.#connection.feed.writtenTo(turnId);
    this.#inserter.insert(
      events.map(({ at, event }, offset) => [turnId, index + offset, at, event.type, JSON.stringify(event)]),
    );
    let lastAt = Number.NaN;
    let lastIso = "";
    for (const { at, event } of events) {
      if (at !== lastAt) {
        lastAt = at;
        lastIso = isoTime(at);
      }
      committed.push({ turnId, index, at: lastIso, event });
      index += 1;
      effects |= effectBitsOf(event);
      if (event.type === "backend.started") conversationId = event.conversationId;
    }
    return { effects, conversationId };
  }

  /** A turn error kept on the row without a terminal event to show it: transformed as an `error` event. */
  #preparedError(error: TurnError): TurnError {
    const shown = this.prepare<TurnEvent>({ type: "error", code: error.code, message: error.message });
    return shown.type === "error" ? { code: shown.code ?? error.code, message: shown.message } : error;
  }

  #closeSecretRequests(turnId: string, status: "orphaned" | "cancelled"): TurnEvent[] {
    const { sql, clock } = this.#connection;
    const now = clock.now();
    return sql.pendingSecretRequestsOfTurn.all(turnId).map((request) => {
      sql.resolveSecretRequest.run(status, now, status === "orphaned" ? null : now, null, request.id);
      return { type: "secret.resolved", requestId: request.id, status };
    });
  }

  #closePermissionRequests(turnId: string, status: "orphaned" | "cancelled"): TurnEvent[] {
    const { permissionSql, clock } = this.#connection;
    const now = clock.now();
    return permissionSql.pendingOfTurn.all(turnId).map((request) => {
      permissionSql.setStatus.run(status, now, request.id);
      return { type: "permission.resolved", requestId: request.id, status };
    });
  }
}
