import {
  BackendEvent,
  type CliProcess,
  DecisionActor,
  isActiveTurnPhase,
  isTerminalTurnPhase,
  JournalId,
  PermissionDecision,
  type PermissionRequest,
  PermissionRequestDraft,
  PermissionRule,
  type SecretRequest,
  SecretRequestDraft,
  SecretResolution,
  SessionDraft,
  SessionPageQuery,
  type SessionRecord,
  type SpawnMarker,
  type ToolAdmission,
  ToolAdmissionDraft,
  TurnError,
  type TurnEvent,
  type TurnEventEnvelope,
  TurnInput,
  type TurnPhase,
  type TurnRecord,
  TurnTransition,
} from "@bridgeworks/protocol";
import type Database from "better-sqlite3";
import { startWalCheckpointer, type WalCheckpointer } from "./checkpointer.js";
import { type Clock, isoTime, systemClock } from "./clock.js";
import { type ConsistencyProblem, findConsistencyProblems } from "./consistency.js";
import { effectBitsOf } from "./effects.js";
import { JournalError, parseInput } from "./errors.js";
import { EventInserter } from "./event-insert.js";
import { createUuidV7Generator } from "./ids.js";
import { migrate } from "./migrations.js";
import {
  type PermissionRequestRow,
  type PermissionStatements,
  preparePermissionStatements,
  toPermissionRequest,
} from "./permission-rows.js";
import { acceptsEvents, assertOwnerTransition } from "./phases.js";
import {
  type SecretRequestRow,
  type SessionRow,
  type TurnRow,
  toEventEnvelope,
  toSecretRequest,
  toSessionRecord,
  toToolAdmission,
  toTurnRecord,
} from "./rows.js";
import { defaultSearchWindow, defaultSessionPageLimit, pageOf, SessionPages } from "./session-pages.js";
import { openSqlite } from "./sqlite.js";
import { prepareStatements, type Statements, type TurnInsert, type TurnState } from "./statements.js";
import { type TurnListener, TurnSubscribers } from "./subscribers.js";
import { WalSync } from "./wal-sync.js";

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
  /** Hears failures nobody else can: a background flush, a subscriber that threw, a failed checkpointer. */
  onError?: (error: unknown) => void;
}

/** SQLite's default `wal_autocheckpoint`, in WAL pages. */
const inlineCheckpointPages = 1000;
/** With a worker checkpointing, SQLite's own checkpoint is only a backstop. */
const backstopCheckpointPages = 10_000;

export const defaultMaxReadEvents = 1000;

interface PendingEvent {
  turnId: string;
  at: number;
  event: BackendEvent;
}

interface TurnChanges {
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

const openSecretStatuses = new Set(["pending", "orphaned"]);
/**
 * Phases that describe the CLI process, committed at `streamSynchronous`: a power loss that could undo
 * them ends that process too, and any effect it proves later commits FULL, which fsyncs them first.
 */
const processPhases: ReadonlySet<TurnPhase> = new Set(["spawning", "running"]);
const synchronousModes: readonly Synchronous[] = ["FULL", "NORMAL"];
const checkpointModes: readonly unknown[] = ["inline", "worker"];

function groupByTurn(batch: readonly PendingEvent[]): Map<string, PendingEvent[]> {
  const byTurn = new Map<string, PendingEvent[]>();
  for (const pending of batch) {
    const events = byTurn.get(pending.turnId);
    if (events) events.push(pending);
    else byTurn.set(pending.turnId, [pending]);
  }
  return byTurn;
}

export function openJournal(options: JournalOptions): TurnJournal {
  return new TurnJournal(options);
}

/**
 * The durable record of Floot sessions, turns, their normalized events, effects, the bridge generation
 * and secret-request metadata. Every method is synchronous and every state change is one SQLite
 * transaction; see README.md for the contract.
 */
export class TurnJournal {
  readonly path: string;
  readonly #db: Database.Database;
  readonly #sql: Statements;
  readonly #events: EventInserter;
  readonly #permissions: PermissionStatements;
  readonly #clock: Clock;
  readonly #newId: () => string;
  readonly #batch: BatchPolicy;
  readonly #onError: (error: unknown) => void;
  readonly #subscribers: TurnSubscribers;
  readonly #synchronous: Synchronous;
  readonly #streamSynchronous: Synchronous;
  readonly #pages: SessionPages;
  readonly #sessionListeners = new Set<(sessionId: string) => void>();
  #changedSessions = new Set<string>();
  /** What the open transaction wrote, per turn; handed to subscribers once it committed. */
  #committed = new Map<string, TurnEventEnvelope[]>();
  #pending: PendingEvent[] = [];
  #pendingEffects = new Map<string, number>();
  #pendingSince: number | undefined;
  #flushTimer: unknown;
  #checkpointer: WalCheckpointer | undefined;
  readonly #walSync: WalSync;

  constructor(options: JournalOptions) {
    this.path = options.path;
    this.#clock = options.clock ?? systemClock;
    this.#newId = options.newId ?? createUuidV7Generator(() => this.#clock.now());
    this.#batch = { ...defaultBatchPolicy, ...options.batch };
    this.#onError =
      options.onError ??
      ((error) =>
        queueMicrotask(() => {
          throw error;
        }));
    this.#subscribers = new TurnSubscribers(this.#onError);
    const synchronous = options.synchronous ?? "FULL";
    this.#synchronous = synchronous;
    this.#streamSynchronous = options.streamSynchronous ?? synchronous;
    for (const [name, mode] of [
      ["synchronous", synchronous],
      ["streamSynchronous", this.#streamSynchronous],
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
    this.#db = openSqlite(options.path, { timeout: 5000 });
    try {
      this.#db.pragma("journal_mode = WAL");
      this.#db.pragma(`synchronous = ${synchronous}`);
      this.#db.pragma("foreign_keys = ON");
      migrate(this.#db);
      this.#sql = prepareStatements(this.#db);
      this.#events = new EventInserter(this.#db);
      this.#permissions = preparePermissionStatements(this.#db);
      this.#pages = new SessionPages(this.#db);
      this.#walSync = new WalSync({ path: options.path });
      if (options.checkpoint === "worker") this.#startCheckpointer();
    } catch (error) {
      this.#db.close();
      throw error;
    }
  }

  // ---- bridge generation -------------------------------------------------------------------------

  bridgeGeneration(): number {
    return this.#sql.generation.get() ?? 0;
  }

  /**
   * Runs `work` with its commits at `synchronous=NORMAL`: none waits for an fsync of its own, and the
   * journal's next `FULL` commit fsyncs them all (in WAL mode one fsync covers every earlier commit).
   * Only for commits whose loss to a power failure is harmless until then, such as recovery's one-turn
   * commits at start-up, made durable by the generation bump before any turn runs, or whose caller
   * awaits `sync()` before it acts on them. Buffered events are committed first, at `streamSynchronous`.
   */
  deferDurability<T>(work: () => T): T {
    this.#flushStream();
    return this.#withSynchronous("NORMAL", work);
  }

  /**
   * Resolves once everything recorded so far is on disk, buffered events committed first: an
   * fdatasync of the WAL on libuv's thread pool, shared by the calls made while one runs (group
   * commit). A commit made under `deferDurability` and then awaited here is as durable as a FULL one
   * before its caller acts on it, and a burst of them costs the event loop no fsync.
   */
  sync(): Promise<void> {
    try {
      this.#flushStream();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#walSync.sync();
  }

  /** Bumps and commits the bridge generation; the daemon calls it once at each start, before any turn. */
  bumpGeneration(): number {
    return this.#transaction(() => {
      this.#sql.bumpGeneration.run();
      return this.bridgeGeneration();
    });
  }

  // ---- sessions ----------------------------------------------------------------------------------

  createSession(draft: SessionDraft): SessionRecord {
    const { id = JournalId.parse(this.#newId()), backend } = parseInput(SessionDraft, draft, "session");
    this.#transaction(() => {
      if (this.#sql.session.get(id)) throw new JournalError("session_exists", `session ${id} already exists`);
      this.#sql.insertSession.run(id, backend, this.#clock.now());
      this.#changedSessions.add(id);
    });
    return this.#requireSession(id);
  }

  getSession(sessionId: string): SessionRecord | undefined {
    const row = this.#sql.session.get(sessionId);
    return row && toSessionRecord(row);
  }

  listSessions(): SessionRecord[] {
    return this.#sql.sessions.all().map(toSessionRecord);
  }

  /** One keyset page of sessions, newest first, optionally of one status or matching a search. */
  listSessionPage(query: SessionPageQuery = {}): { sessions: SessionRecord[]; nextCursor?: string } {
    const valid = parseInput(SessionPageQuery, query, "query");
    const { rows, nextCursor } = this.#pages.page(valid);
    return { sessions: rows.map(toSessionRecord), ...(nextCursor !== undefined && { nextCursor }) };
  }

  /**
   * The page `listSessionPage` returns, for a server's event loop: a search (the one filter that scans)
   * reads at most `window` sessions at a time and awaits `pause()` between, so a rare term that must
   * read thousands of sessions to fill a page never holds the loop for long. Sessions created meanwhile
   * are newer than the page and left to the next read, as between pages.
   */
  async listSessionPageInSteps(
    query: SessionPageQuery,
    { pause, window = defaultSearchWindow }: { pause: () => Promise<void>; window?: number },
  ): Promise<{ sessions: SessionRecord[]; nextCursor?: string }> {
    const valid = parseInput(SessionPageQuery, query, "query");
    if (valid.search === undefined) return this.listSessionPage(valid);
    const limit = valid.limit ?? defaultSessionPageLimit;
    const found: SessionRow[] = [];
    let cursor = valid.cursor;
    for (;;) {
      const step = this.#pages.searchStep(
        { ...valid, limit: limit - found.length, ...(cursor !== undefined && { cursor }) },
        window,
      );
      found.push(...step.rows);
      if (found.length > limit || step.resumeCursor === undefined) break;
      cursor = step.resumeCursor;
      await pause();
    }
    const { rows, nextCursor } = pageOf(found, limit);
    return { sessions: rows.map(toSessionRecord), ...(nextCursor !== undefined && { nextCursor }) };
  }

  /**
   * Wakes `listener` with a session's id after each commit that changed what a session list shows of
   * it: created, stopped, a turn submitted, a turn's phase, a secret request of it resolved, a
   * permission request of it asked, decided or expired.
   */
  subscribeSessionChanges(listener: (sessionId: string) => void): () => void {
    const entry = (sessionId: string) => listener(sessionId);
    this.#sessionListeners.add(entry);
    return () => this.#sessionListeners.delete(entry);
  }

  /** Refuses new turns from now on; queued turns are cancelled. The active turn must have ended. */
  stopSession(sessionId: string): SessionRecord {
    const touched = this.#transaction(() => {
      const session = this.#requireSession(sessionId);
      if (session.status === "stopped") return [];
      if (session.activeTurnId !== undefined) {
        throw new JournalError(
          "session_busy",
          `session ${sessionId} has active turn ${session.activeTurnId}; end it before stopping the session`,
        );
      }
      const queued = this.#sql.queuedTurns.all(sessionId);
      for (const turn of queued) {
        this.#changeTurn(turn, {
          phase: "cancelled",
          error: { code: "session_stopped", message: `session ${sessionId} was stopped` },
        });
      }
      this.#sql.stopSession.run(this.#clock.now(), sessionId);
      this.#changedSessions.add(sessionId);
      return queued.map((turn) => turn.id);
    });
    this.#notify(touched);
    return this.#requireSession(sessionId);
  }

  // ---- turns -------------------------------------------------------------------------------------

  /**
   * Records a turn before anything runs. It is `accepted` when the session has neither an active nor a
   * queued turn, else `queued` at the end of the queue (call `promoteNextTurn` when the active one ends).
   */
  submitTurn(sessionId: string, input: TurnInput): TurnRecord {
    const validInput = parseInput(TurnInput, input, "input");
    const turnId = this.#transaction(() =>
      this.#insertTurn(sessionId, validInput, { attempt: 1, replayOf: null, retryOf: null }),
    );
    this.#notify([turnId]);
    return this.#requireTurn(turnId);
  }

  /** Moves the session's oldest queued turn to `accepted`, if the session has no active turn. */
  promoteNextTurn(sessionId: string): TurnRecord | undefined {
    const turnId = this.#transaction(() => {
      this.#requireSession(sessionId);
      if (this.#sql.activeTurn.get(sessionId)) return undefined;
      const next = this.#sql.nextQueuedTurn.get(sessionId);
      if (!next) return undefined;
      this.#changeTurn(next, { phase: "accepted", stampGeneration: true });
      return next.id;
    });
    if (turnId === undefined) return undefined;
    this.#notify([turnId]);
    return this.#requireTurn(turnId);
  }

  /**
   * Commits a phase change together with its cause event, the phase (or terminal) event and the closing
   * of pending secret requests when the turn ends (`orphaned` if interrupted, else `cancelled`).
   * Buffered stream events are flushed first, so they keep their place before the change.
   */
  transition(turnId: string, change: TurnTransition): TurnRecord {
    const valid = parseInput(TurnTransition, change, "change");
    // Buffered events carry no new effect (those commit at once): this commit, or the next FULL one,
    // makes them durable.
    this.#flushStream();
    const mode = processPhases.has(valid.phase) ? this.#streamSynchronous : this.#synchronous;
    this.#withSynchronous(mode, () =>
      this.#transaction(() => {
        const turn = this.#requireTurnRow(turnId);
        assertOwnerTransition(turnId, turn.phase, valid.phase);
        this.#changeTurn(turn, {
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
    this.#notify([turnId]);
    return this.#requireTurn(turnId);
  }

  /**
   * Starts an explicit retry of an ended turn (failed, cancelled or interrupted): a new turn with the
   * same input and `retryOf`. Idempotent: asking again returns the same retry turn.
   */
  retryTurn(turnId: string): TurnRecord {
    const retryId = this.#transaction(() => {
      const existing = this.#sql.retryOf.get(turnId);
      if (existing) return existing.id;
      const turn = this.#requireTurnRow(turnId);
      if (!isTerminalTurnPhase(turn.phase) || turn.phase === "completed") {
        throw new JournalError(
          "turn_not_retryable",
          `turn ${turnId} is ${turn.phase}; only failed, cancelled or interrupted turns can be retried`,
        );
      }
      return this.#insertTurn(turn.session_id, JSON.parse(turn.input) as TurnInput, {
        attempt: 1,
        replayOf: null,
        retryOf: turn.id,
      });
    });
    this.#notify([retryId]);
    return this.#requireTurn(retryId);
  }

  /**
   * Replays an unfinished turn that has no effect: it ends `interrupted` (its terminal event names the
   * replay) and a new `accepted` turn with the same input, `attempt + 1` and `replayOf` takes its place,
   * in one transaction. Idempotent. A turn with an effect is refused: it needs an explicit retry.
   */
  replayTurn(turnId: string, reason: TurnError): TurnRecord {
    const validReason = parseInput(TurnError, reason, "reason");
    this.flush();
    const touched = this.#transaction(() => {
      const existing = this.#sql.replayOf.get(turnId);
      if (existing) return [existing.id];
      const turn = this.#requireTurnRow(turnId);
      if (!isActiveTurnPhase(turn.phase)) {
        throw new JournalError(
          "invalid_transition",
          `turn ${turnId} is ${turn.phase}; only an accepted, spawning, running or awaiting_secret turn is replayed`,
        );
      }
      if (turn.effects !== 0) {
        throw new JournalError(
          "turn_has_effects",
          `turn ${turnId} has effects; replaying it could repeat them, retry it explicitly instead`,
        );
      }
      const replayId = this.#newId();
      this.#changeTurn(turn, { phase: "interrupted", error: validReason, continuedBy: replayId });
      this.#insertTurn(
        turn.session_id,
        JSON.parse(turn.input) as TurnInput,
        { attempt: turn.attempt + 1, replayOf: turn.id, retryOf: null },
        replayId,
      );
      return [replayId, turn.id];
    });
    this.#notify(touched);
    return this.#requireTurn(touched[0]!);
  }

  getTurn(turnId: string): TurnRecord | undefined {
    const row = this.#sql.turn.get(turnId);
    return row && toTurnRecord(row);
  }

  /** The session's active turn, else its latest one (which may be queued or ended). */
  getCurrentTurn(sessionId: string): TurnRecord | undefined {
    const row = this.#sql.activeTurn.get(sessionId) ?? this.#sql.latestTurn.get(sessionId);
    return row && toTurnRecord(row);
  }

  listTurns(sessionId: string): TurnRecord[] {
    return this.#sql.turnsOfSession.all(sessionId).map(toTurnRecord);
  }

  /**
   * Whether a completed turn of the session other than `exceptTurnId` ran in `conversationId`: a new
   * turn resumes that conversation. It walks the session's turns in the (session_id, seq) index until
   * one matches, building no record and counting no events (`listTurns` does both for every turn).
   */
  conversationEstablished(sessionId: string, conversationId: string, exceptTurnId: string): boolean {
    return this.#sql.conversationEstablished.get(sessionId, conversationId, exceptTurnId) === 1;
  }

  /** Every turn that has not ended, queued ones included, by session and seq: the input of recovery. */
  listNonTerminalTurns(): TurnRecord[] {
    return this.#sql.unfinishedTurns.all().map(toTurnRecord);
  }

  // ---- events ------------------------------------------------------------------------------------

  /**
   * Buffers stream events of a spawning, running or awaiting_secret turn. An event that proves a new
   * effect, or `backend.started`, commits at once with everything buffered before it; the rest commits
   * when the batch is full or old enough. Only committed events are visible to readers.
   */
  appendEvents(turnId: string, events: readonly BackendEvent[]): void {
    if (events.length === 0) return;
    const valid = events.map((event, index) => parseInput(BackendEvent, event, `events[${index}]`));
    // A turn with buffered events was checked when they came, and every phase change flushes first: no
    // read per event (flush checks again, and the store's triggers refuse events of an ended turn).
    let known = this.#pendingEffects.get(turnId);
    if (known === undefined) {
      const turn = this.#sql.turnPhase.get(turnId);
      if (!turn) throw new JournalError("turn_not_found", `turn ${turnId} does not exist`);
      if (!acceptsEvents(turn.phase)) {
        throw new JournalError(
          "not_accepting_events",
          `turn ${turnId} is ${turn.phase}; only spawning, running or awaiting_secret turns take events`,
        );
      }
      known = turn.effects;
    }
    const now = this.#clock.now();
    let newEffect = false;
    let started = false;
    for (const event of valid) {
      const bits = effectBitsOf(event);
      if ((bits & ~known) !== 0) newEffect = true;
      if (event.type === "backend.started") started = true;
      known |= bits;
      this.#pending.push({ turnId, at: now, event });
    }
    this.#pendingEffects.set(turnId, known);
    this.#pendingSince ??= now;
    const full = this.#pending.length >= this.#batch.maxEvents;
    const old = this.#batch.maxDelayMs > 0 && now - this.#pendingSince >= this.#batch.maxDelayMs;
    if (newEffect) this.flush();
    else if (started || full || old) this.#flushStream();
    else this.#scheduleFlush();
  }

  /** Commits buffered events now. On failure they stay buffered and the error is thrown. */
  flush(): void {
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    const touched = this.#transaction(() => {
      const byTurn = groupByTurn(batch);
      for (const [turnId, pending] of byTurn) {
        const turn = this.#sql.turnPhase.get(turnId);
        if (!turn) throw new JournalError("turn_not_found", `turn ${turnId} does not exist`);
        if (!acceptsEvents(turn.phase)) {
          throw new JournalError(
            "not_accepting_events",
            `turn ${turnId} is ${turn.phase}; buffered events refused`,
          );
        }
        this.#writeTurn(turn, pending);
      }
      return [...byTurn.keys()];
    });
    this.#pending = [];
    this.#pendingEffects.clear();
    this.#pendingSince = undefined;
    if (this.#flushTimer !== undefined) this.#clock.clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#notify(touched);
  }

  /** Committed events of a turn from `fromIndex` on, at most `limit` of them, in index order. */
  readEvents(turnId: string, fromIndex = 0, limit = defaultMaxReadEvents): TurnEventEnvelope[] {
    if (!Number.isInteger(fromIndex) || fromIndex < 0) {
      throw new JournalError("invalid_input", `fromIndex: must be a non-negative integer, got ${fromIndex}`);
    }
    if (!Number.isInteger(limit) || limit < 1) {
      throw new JournalError("invalid_input", `limit: must be a positive integer, got ${limit}`);
    }
    return this.#sql.events.all(turnId, fromIndex, limit).map(toEventEnvelope);
  }

  /** Wakes `listener` with the turn id after every commit that adds events to that turn. */
  subscribe(turnId: string, listener: TurnListener): () => void {
    return this.#subscribers.subscribe(turnId, listener);
  }

  // ---- the pre-tool gate ------------------------------------------------------------------------

  /**
   * Records that a tool call of a live turn may start, before it can: its `tool.admitted` event (with
   * the `tool_started` effect unless `effectFree`) and its gate record commit together, with buffered
   * events flushed first, and always with `synchronous=FULL` (fsynced, even on a NORMAL journal). The
   * same call admitted again gets its first record back. A turn that is not spawning, running or
   * awaiting a secret admits nothing (`not_accepting_events`).
   */
  admitToolCall(turnId: string, draft: ToolAdmissionDraft): ToolAdmission {
    const valid = parseInput(ToolAdmissionDraft, draft, "admission");
    this.flush();
    const created = this.#withSynchronous("FULL", () =>
      this.#transaction(() => {
        if (this.#sql.toolGate.get(turnId, valid.toolCallId)) return false;
        const turn = this.#requireTurnRow(turnId);
        if (!acceptsEvents(turn.phase)) {
          throw new JournalError(
            "not_accepting_events",
            `turn ${turnId} is ${turn.phase}; no tool call of it may start`,
          );
        }
        const eventIndex = this.#sql.nextEventIndex.get(turnId) ?? 0;
        this.#changeTurn(turn, {
          events: [
            {
              type: "tool.admitted",
              toolId: valid.toolCallId,
              name: valid.toolName,
              inputPreview: valid.inputPreview,
              ...(valid.effectFree && { effectFree: true as const }),
            },
          ],
        });
        this.#sql.insertToolGate.run({
          turn_id: turnId,
          tool_call_id: valid.toolCallId,
          tool_name: valid.toolName,
          effect_free: valid.effectFree ? 1 : 0,
          event_idx: eventIndex,
          admitted_at: this.#clock.now(),
        });
        return true;
      }),
    );
    if (created) this.#notify([turnId]);
    const row = this.#sql.toolGate.get(turnId, valid.toolCallId);
    if (!row)
      throw new JournalError("turn_not_found", `turn ${turnId} has no gate record ${valid.toolCallId}`);
    return toToolAdmission(row);
  }

  /** The tool calls the gate admitted for a turn, in the order they were admitted. */
  listToolAdmissions(turnId: string): ToolAdmission[] {
    return this.#sql.toolGatesOfTurn.all(turnId).map(toToolAdmission);
  }

  // ---- secret requests ---------------------------------------------------------------------------

  /**
   * Records that a running turn asks a human for a secret: the request (metadata only: there is no
   * parameter for a value), its `secret.requested` event and the move to `awaiting_secret` commit together.
   * The same tool call (`toolCallKey`) asking again gets the same request back.
   */
  requestSecret(turnId: string, draft: SecretRequestDraft): SecretRequest {
    const valid = parseInput(SecretRequestDraft, draft, "draft");
    this.flush();
    const requestId = this.#transaction(() => {
      const existing = this.#sql.secretRequestByToolCall.get(turnId, valid.toolCallKey);
      if (existing) return existing.id;
      const turn = this.#requireTurnRow(turnId);
      if (turn.phase !== "running" && turn.phase !== "awaiting_secret") {
        throw new JournalError(
          "invalid_transition",
          `turn ${turnId} is ${turn.phase}; only a running turn can request a secret`,
        );
      }
      const id = JournalId.parse(this.#newId());
      const now = this.#clock.now();
      this.#sql.insertSecretRequest.run({
        id,
        turn_id: turnId,
        session_id: turn.session_id,
        tool_call_key: valid.toolCallKey,
        name: valid.name,
        prompt: valid.prompt,
        status: "pending",
        bridge_generation: this.bridgeGeneration(),
        created_at: now,
        updated_at: now,
        resolved_at: null,
        submitted_by: null,
      });
      this.#changeTurn(turn, {
        phase: "awaiting_secret",
        events: [{ type: "secret.requested", requestId: id, ...valid }],
      });
      return id;
    });
    this.#notify([turnId]);
    return this.#requireSecretRequest(requestId);
  }

  /**
   * Records the answer to a pending or orphaned request. For a pending one, its `secret.resolved` event
   * commits with it and the turn returns to `running` once none of its requests is pending. The secret
   * itself stays with the caller. Resolving again to the same status is a no-op.
   */
  /** `by`: who answered, for a submission (the actor is journaled with it). */
  resolveSecretRequest(requestId: string, resolution: SecretResolution, by?: DecisionActor): SecretRequest {
    const status = parseInput(SecretResolution, resolution, "resolution");
    const actor = by === undefined ? undefined : parseInput(DecisionActor, by, "by");
    this.flush();
    const touched = this.#transaction(() => {
      const request = this.#requireSecretRequestRow(requestId);
      if (request.status === status) return [];
      if (!openSecretStatuses.has(request.status)) {
        throw new JournalError(
          "secret_request_closed",
          `secret request ${requestId} is already ${request.status}; cannot mark it ${status}`,
        );
      }
      const now = this.#clock.now();
      const byJson = actor === undefined ? null : JSON.stringify(actor);
      this.#sql.resolveSecretRequest.run(status, now, now, byJson, requestId);
      this.#changedSessions.add(request.session_id);
      if (request.status === "orphaned") return [];
      const turn = this.#requireTurnRow(request.turn_id);
      const stillPending = this.#sql.pendingSecretRequestsOfTurn.all(turn.id).length > 0;
      this.#changeTurn(turn, {
        ...(turn.phase === "awaiting_secret" && !stillPending && { phase: "running" }),
        events: [{ type: "secret.resolved", requestId, status, ...(actor !== undefined && { by: actor }) }],
      });
      return [turn.id];
    });
    this.#notify(touched);
    return this.#requireSecretRequest(requestId);
  }

  getSecretRequest(requestId: string): SecretRequest | undefined {
    const row = this.#sql.secretRequest.get(requestId);
    return row && toSecretRequest(row);
  }

  listSecretRequests(turnId: string): SecretRequest[] {
    return this.#sql.secretRequestsOfTurn.all(turnId).map(toSecretRequest);
  }

  /** Requests a human can still answer (pending or orphaned): what the UI shows again after a restart. */
  listOpenSecretRequests(sessionId?: string): SecretRequest[] {
    const rows =
      sessionId === undefined
        ? this.#sql.openSecretRequests.all()
        : this.#sql.openSecretRequestsOfSession.all(sessionId);
    return rows.map(toSecretRequest);
  }

  // ---- permission requests -----------------------------------------------------------------------

  /**
   * Records that Claude Code asks whether a call of a live turn may run: the request and its
   * `permission.requested` event commit together. The same call asking again gets the same request.
   */
  requestPermission(turnId: string, draft: PermissionRequestDraft): PermissionRequest {
    const valid = parseInput(PermissionRequestDraft, draft, "draft");
    this.flush();
    const requestId = this.#transaction(() => {
      const existing = this.#permissions.byToolCall.get(turnId, valid.toolCallKey);
      if (existing) return existing.id;
      const turn = this.#requireTurnRow(turnId);
      if (!acceptsEvents(turn.phase)) {
        throw new JournalError(
          "not_accepting_events",
          `turn ${turnId} is ${turn.phase}; only a live turn can ask for permission`,
        );
      }
      const id = JournalId.parse(this.#newId());
      this.#permissions.insert.run({
        id,
        turn_id: turnId,
        session_id: turn.session_id,
        tool_call_key: valid.toolCallKey,
        tool_name: valid.toolName,
        input_summary: valid.inputSummary,
        input_digest: valid.inputDigest,
        unmatched_rules: JSON.stringify(valid.unmatchedRules),
        suggested_rule: valid.suggestedRule ?? "",
        now: this.#clock.now(),
      });
      const { toolName, inputSummary, unmatchedRules, suggestedRule } = valid;
      this.#changeTurn(turn, {
        events: [
          {
            type: "permission.requested",
            requestId: id,
            toolName,
            inputSummary,
            unmatchedRules,
            ...(suggestedRule !== undefined && { suggestedRule }),
          },
        ],
      });
      this.#changedSessions.add(turn.session_id);
      return id;
    });
    this.#subscribers.notify([turnId]);
    return this.#requirePermissionRequest(requestId);
  }

  /**
   * Records a human's decision on a pending or orphaned request; "allow for this session" adds its rule
   * to the session in the same transaction. The decision is applied later (`applyPermissionDecision`).
   */
  /** `by`: who decided, journaled with the decision and its `permission.resolved` event. */
  decidePermissionRequest(
    requestId: string,
    decision: PermissionDecision,
    by: DecisionActor,
  ): PermissionRequest {
    const valid = parseInput(PermissionDecision, decision, "decision");
    const actor = parseInput(DecisionActor, by, "by");
    if (valid.behavior === "allow" && valid.scope === "session" && valid.rule === undefined) {
      throw new JournalError("invalid_input", "decision.rule: allowing for the session needs a rule");
    }
    this.flush();
    const touched = this.#transaction(() => {
      const request = this.#requirePermissionRow(requestId);
      if (request.status !== "pending" && request.status !== "orphaned") {
        throw new JournalError(
          "permission_request_closed",
          `permission request ${requestId} is already ${request.status}`,
        );
      }
      const now = this.#clock.now();
      const status = valid.behavior === "allow" ? "allowed" : "denied";
      this.#permissions.decide.run(status, JSON.stringify(valid), now, now, JSON.stringify(actor), requestId);
      const rule = valid.behavior === "allow" && valid.scope === "session" ? valid.rule : undefined;
      if (rule !== undefined) this.#permissions.addRule.run(request.session_id, rule, now);
      this.#changedSessions.add(request.session_id);
      const turn = this.#requireTurnRow(request.turn_id);
      if (!acceptsEvents(turn.phase)) return [];
      this.#changeTurn(turn, {
        events: [
          {
            type: "permission.resolved",
            requestId,
            status,
            ...(rule !== undefined && { rule }),
            ...(valid.behavior === "deny" && valid.message !== undefined && { message: valid.message }),
            by: actor,
          },
        ],
      });
      return [turn.id];
    });
    this.#subscribers.notify(touched);
    return this.#requirePermissionRequest(requestId);
  }

  /**
   * Marks a decision as having reached a call of `turnId` (the one that asked, or its retry's identical
   * call), with a `permission.resolved` `applied` event on that turn. Once: a second apply is refused.
   */
  applyPermissionDecision(requestId: string, turnId: string): PermissionRequest {
    this.flush();
    const touched = this.#transaction(() => {
      const request = this.#requirePermissionRow(requestId);
      const now = this.#clock.now();
      if (request.decision === null || this.#permissions.apply.run(now, now, requestId).changes !== 1) {
        throw new JournalError(
          "permission_request_closed",
          `permission request ${requestId} is ${request.applied_at !== null ? "already applied" : request.status}`,
        );
      }
      const turn = this.#requireTurnRow(turnId);
      if (!acceptsEvents(turn.phase)) return [];
      this.#changeTurn(turn, { events: [{ type: "permission.resolved", requestId, status: "applied" }] });
      return [turn.id];
    });
    this.#subscribers.notify(touched);
    return this.#requirePermissionRequest(requestId);
  }

  /** A decided request of the session, not yet applied, for the same tool and input. */
  findUnappliedPermissionDecision(
    sessionId: string,
    toolName: string,
    inputDigest: string,
  ): PermissionRequest | undefined {
    const row = this.#permissions.unapplied.get(sessionId, toolName, inputDigest);
    return row && toPermissionRequest(row);
  }

  /** A pending request nobody decided in time (the session's timeout): `expired`, final. */
  expirePermissionRequest(requestId: string): PermissionRequest {
    this.flush();
    const touched = this.#transaction(() => {
      const request = this.#requirePermissionRow(requestId);
      if (request.status !== "pending") return [];
      this.#permissions.setStatus.run("expired", this.#clock.now(), requestId);
      this.#changedSessions.add(request.session_id);
      const turn = this.#requireTurnRow(request.turn_id);
      if (!acceptsEvents(turn.phase)) return [];
      this.#changeTurn(turn, { events: [{ type: "permission.resolved", requestId, status: "expired" }] });
      return [turn.id];
    });
    this.#subscribers.notify(touched);
    return this.#requirePermissionRequest(requestId);
  }

  getPermissionRequest(requestId: string): PermissionRequest | undefined {
    const row = this.#permissions.byId.get(requestId);
    return row && toPermissionRequest(row);
  }

  /** Requests a human can still decide (pending or orphaned), oldest first; of one session if named. */
  listOpenPermissionRequests(sessionId?: string): PermissionRequest[] {
    const rows =
      sessionId === undefined ? this.#permissions.open.all() : this.#permissions.openOfSession.all(sessionId);
    return rows.map(toPermissionRequest);
  }

  /** The `limit` newest requests whatever their status (decided ones with who decided), newest first. */
  listRecentPermissionRequests(limit: number): PermissionRequest[] {
    return this.#permissions.recent.all(limit).map(toPermissionRequest);
  }

  /** The rules "allow for this session" added, in the order they were added. */
  listSessionRules(sessionId: string): string[] {
    this.#requireSession(sessionId);
    return this.#permissions.rules.all(sessionId);
  }

  /** Removes a session rule; later turns no longer get it. Removing a rule that is not there is a no-op. */
  removeSessionRule(sessionId: string, rule: string): string[] {
    const valid = parseInput(PermissionRule, rule, "rule");
    this.#transaction(() => {
      this.#requireSession(sessionId);
      this.#permissions.removeRule.run(sessionId, valid);
    });
    return this.listSessionRules(sessionId);
  }

  // ---- health ------------------------------------------------------------------------------------

  /** What this connection actually runs with, read back from SQLite. */
  durability(): { journalMode: string; synchronous: Synchronous } {
    const synchronous = this.#db.pragma("synchronous", { simple: true }) === 2 ? "FULL" : "NORMAL";
    return { journalMode: String(this.#db.pragma("journal_mode", { simple: true })), synchronous };
  }

  /** Who checkpoints the WAL now (`inline` again if the worker failed), and the worker's checkpoints so far. */
  walCheckpoints(): { mode: "inline" | "worker"; byWorker: number } {
    const worker = this.#checkpointer;
    return { mode: worker && !worker.failed ? "worker" : "inline", byWorker: worker?.checkpoints ?? 0 };
  }

  /** Flushes, then checks SQLite integrity and the journal's own invariants; empty means consistent. */
  checkConsistency(): ConsistencyProblem[] {
    this.flush();
    return findConsistencyProblems(this.#db);
  }

  /** Flushes buffered events and closes the database. */
  close(): void {
    if (!this.#db.open) return;
    try {
      this.flush();
    } finally {
      if (this.#flushTimer !== undefined) this.#clock.clearTimeout(this.#flushTimer);
      this.#flushTimer = undefined;
      this.#checkpointer?.close();
      this.#walSync.close();
      this.#db.close();
    }
  }

  // ---- internals ---------------------------------------------------------------------------------

  #transaction<T>(work: () => T): T {
    const outermost = !this.#db.inTransaction;
    let result: T;
    try {
      // IMMEDIATE takes the write lock up front: no deadlock upgrading a read to a write.
      result = this.#db.transaction(work).immediate();
    } catch (error) {
      if (outermost) this.#changedSessions.clear();
      // Even a nested failure: a subscriber then reads the journal, it never hears rolled-back events.
      this.#committed.clear();
      throw error;
    }
    if (outermost) {
      this.#checkpointer?.committed();
      this.#announceSessionChanges();
    }
    return result;
  }

  #startCheckpointer(): void {
    this.#db.pragma(`wal_autocheckpoint = ${backstopCheckpointPages}`);
    this.#checkpointer = startWalCheckpointer({
      path: this.path,
      onError: this.#onError,
      onFailure: () => {
        if (this.#db.open) this.#db.pragma(`wal_autocheckpoint = ${inlineCheckpointPages}`);
      },
    });
  }

  /** Wakes the turns' subscribers with the events just committed to each (they need not read them back). */
  #notify(turnIds: Iterable<string>): void {
    const committed = this.#committed;
    this.#committed = new Map();
    this.#subscribers.notify(turnIds, committed);
  }

  /** After the commit only: a listener never hears of a change that rolled back. */
  #announceSessionChanges(): void {
    if (this.#changedSessions.size === 0) return;
    const changed = this.#changedSessions;
    this.#changedSessions = new Set();
    for (const sessionId of changed) {
      for (const listener of [...this.#sessionListeners]) {
        try {
          listener(sessionId);
        } catch (error) {
          this.#onError(error);
        }
      }
    }
  }

  /** Runs `work` with `synchronous=mode` on this connection, whatever the journal was opened with. */
  #withSynchronous<T>(mode: Synchronous, work: () => T): T {
    if (this.#synchronous === mode) return work();
    // Set per call, never as a prepared statement run again: SQLite applies this pragma when the
    // statement is prepared, so a rerun of one prepared earlier changes nothing.
    this.#db.pragma(`synchronous = ${mode}`);
    try {
      return work();
    } finally {
      this.#db.pragma(`synchronous = ${this.#synchronous}`);
    }
  }

  /** Buffered events without a new effect, at `streamSynchronous` (a new effect flushes with `synchronous`). */
  #flushStream(): void {
    if (this.#pending.length === 0) return;
    this.#withSynchronous(this.#streamSynchronous, () => this.flush());
  }

  #scheduleFlush(): void {
    if (this.#flushTimer !== undefined) return;
    this.#flushTimer = this.#clock.setTimeout(() => {
      this.#flushTimer = undefined;
      if (!this.#db.open) return;
      try {
        this.#flushStream();
      } catch (error) {
        this.#onError(error);
      }
    }, this.#batch.maxDelayMs);
  }

  #insertTurn(
    sessionId: string,
    input: TurnInput,
    lineage: Pick<TurnInsert, "attempt" | "replayOf" | "retryOf">,
    id = this.#newId(),
  ): string {
    const session = this.#requireSession(sessionId);
    if (session.status === "stopped") {
      throw new JournalError("session_stopped", `session ${sessionId} is stopped; it takes no new turn`);
    }
    // A replay takes its predecessor's place at once; any other turn waits behind the queue, if there is one.
    const mustWait =
      session.activeTurnId !== undefined || (lineage.replayOf === null && session.queuedTurns > 0);
    const phase = mustWait ? "queued" : "accepted";
    const now = this.#clock.now();
    this.#sql.insertTurn.run({
      id: JournalId.parse(id),
      sessionId,
      seq: this.#sql.nextSeq.get(sessionId) ?? 1,
      input: JSON.stringify(input),
      phase,
      ...lineage,
      generation: this.bridgeGeneration(),
      now,
    });
    this.#writeEvents(id, [{ at: now, event: { type: "phase", phase } }]);
    this.#sql.setSessionTitle.run(input.prompt.slice(0, 200), sessionId);
    this.#changedSessions.add(sessionId);
    return id;
  }

  /**
   * Applies one change to a turn inside the caller's transaction: appends `events`, then, when the phase
   * changes, the closing of pending secret requests (on ending) and the phase or terminal event; then
   * updates the row, effects included.
   */
  #changeTurn(turn: TurnRow, changes: TurnChanges): void {
    const now = this.#clock.now();
    const events: TurnEvent[] = [...(changes.events ?? [])];
    const phase = changes.phase ?? turn.phase;
    if (changes.phase !== undefined && changes.phase !== turn.phase) {
      this.#changedSessions.add(turn.session_id);
      if (isTerminalTurnPhase(changes.phase)) {
        const closedAs = changes.phase === "interrupted" ? "orphaned" : "cancelled";
        events.push(...this.#closeSecretRequests(turn.id, closedAs));
        events.push(...this.#closePermissionRequests(turn.id, closedAs));
        events.push({
          type: "terminal",
          outcome: changes.phase,
          ...(changes.error && { error: changes.error }),
          ...(changes.continuedBy !== undefined && { continuedBy: changes.continuedBy }),
        });
      } else {
        events.push({ type: "phase", phase: changes.phase });
      }
    }
    const written = this.#writeEvents(
      turn.id,
      events.map((event) => ({ at: now, event })),
    );
    const conversationId = changes.conversationId ?? written.conversationId;
    this.#sql.updateTurn.run({
      id: turn.id,
      phase,
      effects: turn.effects | written.effects,
      conversationId: conversationId ?? null,
      spawnMarker: changes.spawnMarker ?? null,
      pid: changes.process?.pid ?? null,
      startTime: changes.process?.startTime ?? null,
      errorCode: changes.error?.code ?? null,
      errorMessage: changes.error?.message ?? null,
      generation: changes.stampGeneration ? this.bridgeGeneration() : null,
      now,
      endedAt: isTerminalTurnPhase(phase) && phase !== turn.phase ? now : null,
    });
    if (conversationId !== undefined) this.#sql.setSessionConversation.run(conversationId, turn.session_id);
  }

  /** Buffered stream events of one turn: events, effects and conversation id in the caller's transaction. */
  #writeTurn(turn: TurnState, pending: readonly PendingEvent[]): void {
    const written = this.#writeEvents(turn.id, pending);
    this.#sql.updateTurnStream.run({
      id: turn.id,
      effects: turn.effects | written.effects,
      conversationId: written.conversationId ?? null,
      now: this.#clock.now(),
    });
    if (written.conversationId !== undefined) {
      this.#sql.setSessionConversation.run(written.conversationId, turn.session_id);
    }
  }

  #writeEvents(
    turnId: string,
    events: readonly { at: number; event: TurnEvent }[],
  ): { effects: number; conversationId: string | undefined } {
    let index = this.#sql.nextEventIndex.get(turnId) ?? 0;
    let effects = 0;
    let conversationId: string | undefined;
    let committed = this.#committed.get(turnId);
    if (!committed) {
      committed = [];
      this.#committed.set(turnId, committed);
    }
    this.#events.insert(
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

  #closeSecretRequests(turnId: string, status: "orphaned" | "cancelled"): TurnEvent[] {
    const now = this.#clock.now();
    return this.#sql.pendingSecretRequestsOfTurn.all(turnId).map((request) => {
      this.#sql.resolveSecretRequest.run(status, now, status === "orphaned" ? null : now, null, request.id);
      return { type: "secret.resolved", requestId: request.id, status };
    });
  }

  #closePermissionRequests(turnId: string, status: "orphaned" | "cancelled"): TurnEvent[] {
    const now = this.#clock.now();
    return this.#permissions.pendingOfTurn.all(turnId).map((request) => {
      this.#permissions.setStatus.run(status, now, request.id);
      return { type: "permission.resolved", requestId: request.id, status };
    });
  }

  #requirePermissionRow(requestId: string): PermissionRequestRow {
    const row = this.#permissions.byId.get(requestId);
    if (!row) {
      throw new JournalError(
        "permission_request_not_found",
        `permission request ${requestId} does not exist`,
      );
    }
    return row;
  }

  #requirePermissionRequest(requestId: string): PermissionRequest {
    return toPermissionRequest(this.#requirePermissionRow(requestId));
  }

  #requireSession(sessionId: string): SessionRecord {
    const session = this.getSession(sessionId);
    if (!session) throw new JournalError("session_not_found", `session ${sessionId} does not exist`);
    return session;
  }

  #requireTurnRow(turnId: string): TurnRow {
    const row = this.#sql.turn.get(turnId);
    if (!row) throw new JournalError("turn_not_found", `turn ${turnId} does not exist`);
    return row;
  }

  #requireTurn(turnId: string): TurnRecord {
    return toTurnRecord(this.#requireTurnRow(turnId));
  }

  #requireSecretRequestRow(requestId: string): SecretRequestRow {
    const row = this.#sql.secretRequest.get(requestId);
    if (!row)
      throw new JournalError("secret_request_not_found", `secret request ${requestId} does not exist`);
    return row;
  }

  #requireSecretRequest(requestId: string): SecretRequest {
    return toSecretRequest(this.#requireSecretRequestRow(requestId));
  }
}
