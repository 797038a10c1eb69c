import {
  CliLostDecision,
  isActiveTurnPhase,
  isTerminalTurnPhase,
  mayHaveRunErrorCode,
  TurnError,
  TurnInput,
  type TurnPhase,
  type TurnRecord,
  TurnTransition,
} from "@bridgeworks/protocol";
import { JournalError, parseInput } from "./errors.js";
import { JournalArea } from "./journal-area.js";
import { assertOwnerTransition } from "./phases.js";
import { requireSession, requireTurn, requireTurnRow } from "./records.js";
import { type TurnRow, toTurnRecord } from "./rows.js";
import type { TurnWrites } from "./turn-writes.js";

/**
 * Phases that describe the CLI process, committed at `streamSynchronous`: a power loss that could undo
 * them ends that process too, and any effect it proves later commits FULL, which fsyncs them first.
 */
const processPhases: ReadonlySet<TurnPhase> = new Set(["spawning", "running"]);

/** Turns: submitted, queued and promoted, moved through their phases, replayed and retried, read back. */
export class JournalTurns extends JournalArea {
  /**
   * Records a turn before anything runs. It is `accepted` when the session has neither an active nor a
   * queued turn, else `queued` at the end of the queue (call `promoteNextTurn` when the active one ends).
   */
  submitTurn(sessionId: string, input: TurnInput): TurnRecord {
    const validInput = parseInput(TurnInput, input, "input");
    const turnId = this.connection.transaction(() =>
      this.writes.insertTurn(sessionId, validInput, { attempt: 1, replayOf: null, retryOf: null }),
    );
    this.connection.feed.notify([turnId]);
    return requireTurn(this.connection, turnId);
  }

  /** Moves the session's oldest queued turn to `accepted`, if the session has no active turn. */
  promoteNextTurn(sessionId: string): TurnRecord | undefined {
    const { sql } = this.connection;
    const turnId = this.connection.transaction(() => {
      requireSession(this.connection, sessionId);
      if (sql.activeTurn.get(sessionId)) return undefined;
      const next = sql.nextQueuedTurn.get(sessionId);
      if (!next) return undefined;
      this.writes.changeTurn(next, { phase: "accepted", stampGeneration: true });
      return next.id;
    });
    if (turnId === undefined) return undefined;
    this.connection.feed.notify([turnId]);
    return requireTurn(this.connection, turnId);
  }

  /**
   * Commits a phase change together with its cause event, the phase (or terminal) event and the closing
   * of pending secret requests when the turn ends (`orphaned` if interrupted, else `cancelled`).
   * Buffered stream events, and streamed text held back, are flushed first, so they keep their place
   * before the change.
   */
  transition(turnId: string, change: TurnTransition): TurnRecord {
    const valid = parseInput(TurnTransition, change, "change");
    const connection = this.connection;
    this.buffer.release(turnId);
    // Buffered events carry no new effect (those commit at once): this commit, or the next FULL one,
    // makes them durable.
    this.buffer.flushStream();
    const mode = processPhases.has(valid.phase) ? connection.streamSynchronous : connection.synchronous;
    connection.withSynchronous(mode, () =>
      connection.transaction(() => {
        const turn = requireTurnRow(connection, turnId);
        assertOwnerTransition(turnId, turn.phase, valid.phase);
        this.writes.changeTurn(turn, {
          phase: valid.phase,
          events: valid.cause ? [valid.cause] : [],
          conversationId: valid.conversationId,
          spawnMarker: valid.spawnMarker,
          process: valid.process,
          error: valid.error,
          stampGeneration: valid.phase === "spawning",
        });
      }),
    );
    connection.feed.notify([turnId]);
    return requireTurn(connection, turnId);
  }

  /**
   * Starts an explicit retry of an ended turn (failed, cancelled or interrupted): a new turn with the
   * same input and `retryOf`. Idempotent: asking again returns the same retry turn.
   */
  retryTurn(turnId: string): TurnRecord {
    const retryId = this.connection.transaction(() => {
      const existing = this.connection.sql.retryOf.get(turnId);
      if (existing) return existing.id;
      const turn = requireTurnRow(this.connection, turnId);
      if (!isTerminalTurnPhase(turn.phase) || turn.phase === "completed") {
        throw new JournalError(
          "turn_not_retryable",
          `turn ${turnId} is ${turn.phase}; only failed, cancelled or interrupted turns can be retried`,
        );
      }
      return this.writes.insertTurn(turn.session_id, JSON.parse(turn.input) as TurnInput, {
        attempt: 1,
        replayOf: null,
        retryOf: turn.id,
      });
    });
    this.connection.feed.notify([retryId]);
    return requireTurn(this.connection, retryId);
  }

  /**
   * Replays an unfinished turn that has no effect: it ends `interrupted` (its terminal event names the
   * replay) and a new `accepted` turn with the same input, `attempt + 1` and `replayOf` takes its place,
   * in one transaction. Idempotent. A turn with an effect is refused: it needs an explicit retry.
   */
  replayTurn(turnId: string, reason: TurnError): TurnRecord {
    return this.#takeItsPlace(turnId, reason, {
      existing: this.connection.sql.replayOf,
      refusal: (turn) => {
        if (!isActiveTurnPhase(turn.phase)) {
          return new JournalError(
            "invalid_transition",
            `turn ${turnId} is ${turn.phase}; only an accepted, spawning, running or awaiting_secret turn is replayed`,
          );
        }
        if (turn.effects !== 0) {
          return new JournalError(
            "turn_has_effects",
            `turn ${turnId} has effects; replaying it could repeat them, retry it explicitly instead`,
          );
        }
        return undefined;
      },
      input: (turn) => JSON.parse(turn.input) as TurnInput,
      lineage: (turn) => ({ attempt: turn.attempt + 1, replayOf: turn.id, retryOf: null }),
    });
  }

  /**
   * Carries on an unfinished turn whose CLI is gone, on the same conversation: it ends `interrupted`
   * with `reason` (its terminal event names the continuation), and a new turn with `prompt` (a note to
   * the model), `attempt + 1` and `continues` takes its place, in one transaction. Idempotent.
   */
  continueTurn(turnId: string, reason: TurnError, prompt: string): TurnRecord {
    const input = parseInput(TurnInput, { prompt }, "input");
    return this.#takeItsPlace(turnId, reason, {
      existing: this.connection.sql.continuationOf,
      refusal: (turn) =>
        isActiveTurnPhase(turn.phase)
          ? undefined
          : new JournalError(
              "invalid_transition",
              `turn ${turnId} is ${turn.phase}; only an unfinished turn is continued by itself`,
            ),
      input: () => input,
      lineage: (turn) => ({ attempt: turn.attempt + 1, replayOf: null, retryOf: null, continues: turn.id }),
    });
  }

  /**
   * A replay's and a continuation's one transaction: the unfinished turn ends `interrupted` with
   * `reason`, its terminal event naming the new turn, which takes its place. The successor it already
   * has is returned instead (idempotent).
   */
  #takeItsPlace(
    turnId: string,
    reason: TurnError,
    successor: {
      existing: { get(turnId: string): TurnRow | undefined };
      refusal(turn: TurnRow): JournalError | undefined;
      input(turn: TurnRow): TurnInput;
      lineage(turn: TurnRow): Parameters<TurnWrites["insertTurn"]>[2];
    },
  ): TurnRecord {
    const validReason = parseInput(TurnError, reason, "reason");
    this.buffer.flush();
    const touched = this.connection.transaction(() => {
      const existing = successor.existing.get(turnId);
      if (existing) return [existing.id];
      const turn = requireTurnRow(this.connection, turnId);
      const refusal = successor.refusal(turn);
      if (refusal) throw refusal;
      const successorId = this.connection.newId();
      this.writes.changeTurn(turn, { phase: "interrupted", error: validReason, continuedBy: successorId });
      this.writes.insertTurn(turn.session_id, successor.input(turn), successor.lineage(turn), successorId);
      return [successorId, turn.id];
    });
    this.connection.feed.notify(touched);
    return requireTurn(this.connection, touched[0]!);
  }

  /**
   * Records a person's decision for a turn interrupted with `may_have_run`, once: `run_again` and
   * `skip` start its continuation with `prompt` (saying which), `stop` leaves it ended. The same
   * decision again returns the same turns; another one is refused (`decision_made`).
   */
  decideCliLost(
    turnId: string,
    decision: CliLostDecision,
    prompt: string | undefined,
  ): { turn: TurnRecord; continuation?: TurnRecord } {
    const valid = parseInput(CliLostDecision, decision, "decision");
    const touched = this.connection.transaction(() => {
      const turn = requireTurnRow(this.connection, turnId);
      if (turn.phase !== "interrupted" || turn.error_code !== mayHaveRunErrorCode) {
        throw new JournalError(
          "invalid_transition",
          `turn ${turnId} is ${turn.phase}${turn.error_code ? ` (${turn.error_code})` : ""}; only a turn ` +
            `interrupted with ${mayHaveRunErrorCode} waits on this decision`,
        );
      }
      if (turn.cli_lost_decision !== null) {
        if (turn.cli_lost_decision !== valid) {
          throw new JournalError(
            "decision_made",
            `turn ${turnId} was decided already (${turn.cli_lost_decision}); a decision is made once`,
          );
        }
        const continuation = this.connection.sql.continuationOf.get(turnId);
        return continuation ? [turn.id, continuation.id] : [turn.id];
      }
      this.connection.sql.setCliLostDecision.run(valid, this.connection.clock.now(), turnId);
      this.connection.feed.sessionChanged(turn.session_id);
      if (valid === "stop") return [turn.id];
      const input = parseInput(TurnInput, { prompt }, "input");
      const continuationId = this.writes.insertTurn(turn.session_id, input, {
        attempt: turn.attempt + 1,
        replayOf: null,
        retryOf: null,
        continues: turn.id,
      });
      return [turn.id, continuationId];
    });
    this.connection.feed.notify(touched);
    const [decided, continuation] = touched;
    return {
      turn: requireTurn(this.connection, decided!),
      ...(continuation !== undefined && { continuation: requireTurn(this.connection, continuation) }),
    };
  }

  getTurn(turnId: string): TurnRecord | undefined {
    const row = this.connection.sql.turn.get(turnId);
    return row && toTurnRecord(row);
  }

  /** The session's active turn, else its latest one (which may be queued or ended). */
  getCurrentTurn(sessionId: string): TurnRecord | undefined {
    const { sql } = this.connection;
    const row = sql.activeTurn.get(sessionId) ?? sql.latestTurn.get(sessionId);
    return row && toTurnRecord(row);
  }

  listTurns(sessionId: string): TurnRecord[] {
    return this.connection.sql.turnsOfSession.all(sessionId).map(toTurnRecord);
  }

  /**
   * Whether a completed turn of the session other than `exceptTurnId` ran in `conversationId`: a new
   * turn resumes that conversation. It walks the session's turns in the (session_id, seq) index until
   * one matches, building no record and counting no events (`listTurns` does both for every turn).
   */
  conversationEstablished(sessionId: string, conversationId: string, exceptTurnId: string): boolean {
    return this.connection.sql.conversationEstablished.get(sessionId, conversationId, exceptTurnId) === 1;
  }

  /** Every turn that has not ended, queued ones included, by session and seq: the input of recovery. */
  listNonTerminalTurns(): TurnRecord[] {
    return this.connection.sql.unfinishedTurns.all().map(toTurnRecord);
  }
}
