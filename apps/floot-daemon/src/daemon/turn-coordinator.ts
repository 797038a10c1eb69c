import {
  type BackendAdapter,
  type CliSpawner,
  type ConfinementSpec,
  type KeeperClient,
  TurnErrorCode,
  type TurnOutcome,
} from "@bridgeworks/backend-adapters";
import {
  type CliProcess,
  isActiveTurnPhase,
  isTerminalTurnPhase,
  type SessionRecord,
  type TurnRecord,
} from "@bridgeworks/protocol";
import { describeError, type Logger } from "@bridgeworks/runtime";
import { JournalError, type JournalMaintenance, type JournalTurns } from "@bridgeworks/turn-journal";
import type { CliStartSlots } from "./cli-start-slots.js";
import type { PermissionBroker } from "./permission-broker.js";
import type { SecretBroker } from "./secret-broker.js";
import type { SessionStore } from "./session-store.js";
import { noTrace, type Trace } from "./trace.js";
import { hiddenPathOf } from "./turn-confinement.js";
import type { LiveTurnProcess } from "./turn-membership.js";
import { type TurnMounts, TurnRun, type TurnRunJournal } from "./turn-run.js";

export type { TurnMount, TurnMounts } from "./turn-run.js";

/** What the coordinator uses of the journal: the turn side, and the group commit its turns' ends share. */
export interface CoordinatorJournal extends TurnRunJournal {
  turns: Pick<
    JournalTurns,
    "getTurn" | "promoteNextTurn" | "replayTurn" | "transition" | "conversationEstablished"
  >;
  maintenance: Pick<JournalMaintenance, "deferDurability" | "sync">;
}

export interface TurnCoordinatorOptions {
  journal: CoordinatorJournal;
  sessions: SessionStore;
  secrets: SecretBroker;
  permissions: PermissionBroker;
  mounts: TurnMounts;
  adapterFor(session: SessionRecord): BackendAdapter;
  /** The sandbox the turn's commands run in (its workspace given); undefined: the session runs unconfined. */
  confine(session: SessionRecord, workspace: string, turnId: string): Promise<ConfinementSpec | undefined>;
  logger: Logger;
  /** How long one tool call may wait (a human answering a secret form). */
  toolTimeoutMs: number;
  /** Every CLI's nice value (backend-adapters' `CliLaunch.nice`). */
  cliNice: number;
  /** What starts the CLIs: the daemon's spawner process, so no spawn blocks its event loop. */
  spawner: CliSpawner;
  /** How many CLIs start at once; a turn waits for a slot, still `accepted`. */
  startSlots: CliStartSlots;
  /** The state dir's keeper while connected: CLIs it starts outlive this daemon (keeper-link.ts). */
  keeper?: () => KeeperClient | undefined;
  /** A turn whose keeper went away while it ran: decided on as a start would (recovery.ts). */
  recoverLost?: (turnId: string) => Promise<unknown>;
  trace?: Trace;
}

/**
 * Runs each session's active turn, one CLI process per turn and one turn per session at a time, as
 * many CLIs starting at once as `startSlots` allows (a turn waits for a slot, accepted): spawning
 * (with the spawn marker the CLI will carry) -> running (pid and start time journaled first) -> one
 * terminal phase, then the next queued turn. Every event goes to the journal before the next
 * line of the CLI is read; every tool call passes the gate (see tool-gate.ts) before it runs. A turn
 * that cannot run ends `failed` with the cause; nothing a turn does escapes into the daemon.
 */
export class TurnCoordinator {
  readonly #options: TurnCoordinatorOptions;
  /** Each turn running here, and its run's end. */
  readonly #live = new Map<string, { run: TurnRun; done: Promise<void> }>();
  readonly #trace: Trace;
  #stopping = false;

  constructor(options: TurnCoordinatorOptions) {
    this.#options = options;
    this.#trace = options.trace ?? noTrace;
  }

  /** At start: the sessions with a turn recovery kept or replayed; no other session has one to run. */
  resume(sessionIds: Iterable<string>): void {
    for (const sessionId of new Set(sessionIds)) this.kick(sessionId);
  }

  /** Starts the session's accepted turn, or promotes its next queued one, unless one runs here already. */
  kick(sessionId: string): void {
    if (this.#stopping) return;
    const { journal } = this.#options;
    const session = journal.sessions.getSession(sessionId);
    if (!session) return;
    let turn = session.activeTurnId !== undefined ? journal.turns.getTurn(session.activeTurnId) : undefined;
    if (!turn) turn = journal.turns.promoteNextTurn(sessionId);
    if (turn?.phase !== "accepted" || this.#live.has(turn.id)) return;
    this.#launch(turn);
  }

  /**
   * At start, before any kick: goes on with a turn whose CLI the keeper kept across the restart,
   * attached to again and read on from `through` (its journaled stdout position).
   */
  adopt(turn: TurnRecord, process: CliProcess, through: number): void {
    if (this.#stopping || this.#live.has(turn.id)) return;
    this.#launch(turn, { process, through });
  }

  #launch(turn: TurnRecord, adopt?: { process: CliProcess; through: number }): void {
    const run = new TurnRun(turn, {
      ...this.#options,
      keeper: this.#options.keeper ?? (() => undefined),
      trace: this.#trace,
      record: (turnId, outcome) => this.#end(turnId, outcome),
    });
    const done = this.#runToEnd(run, adopt).catch((error: unknown) => {
      this.#options.logger.error("turn bookkeeping failed", {
        turn: run.turn.id,
        error: describeError(error),
      });
    });
    this.#live.set(turn.id, { run, done });
  }

  isLive(turnId: string): boolean {
    return this.#live.has(turnId);
  }

  /** The CLIs of the turns running here (pid 0 while a CLI is being spawned: its marker still counts). */
  liveTurnProcesses(): LiveTurnProcess[] {
    return [...this.#live].flatMap(([turnId, { run }]) =>
      run.spawnMarker === undefined ? [] : [{ turnId, pid: run.pid ?? 0, spawnMarker: run.spawnMarker }],
    );
  }

  /** For a confined live turn: the path a file tool call would touch outside its bounds. */
  outOfBounds(
    turnId: string,
    toolName: string,
    input: Readonly<Record<string, unknown>>,
  ): string | undefined {
    const place = this.#live.get(turnId)?.run.place;
    if (place?.confinement === undefined) return undefined;
    return hiddenPathOf(place.confinement, place.workspace, toolName, input);
  }

  /** The tools a live turn's gate admits without an effect; undefined for a turn not running here. */
  effectFreeToolsOf(turnId: string): ReadonlySet<string> | undefined {
    return this.#live.get(turnId)?.run.effectFreeTools;
  }

  /** Cancels a queued, accepted or running turn; a running CLI's process group is ended first. */
  async cancel(turnId: string): Promise<TurnRecord> {
    const { journal } = this.#options;
    const turn = journal.turns.getTurn(turnId);
    if (!turn) throw new JournalError("turn_not_found", `turn ${turnId} does not exist`);
    if (isTerminalTurnPhase(turn.phase)) {
      throw new JournalError("invalid_transition", `turn ${turnId} is ${turn.phase}; it has ended`);
    }
    const live = this.#live.get(turnId);
    if (live) {
      live.run.dispatch({ type: "cancel" });
      await live.run.stopped();
      // A stopped CLI's end is recorded once its exit is read.
      if (live.run.state.kind === "cancelling") await live.done;
      await this.#durable(turnId);
      return journal.turns.getTurn(turnId)!;
    }
    const cancelled = journal.turns.transition(turnId, {
      phase: "cancelled",
      error: { code: "cancelled", message: "cancelled by the user" },
    });
    this.kick(turn.sessionId);
    return cancelled;
  }

  /**
   * Journals nothing more: a CLI the keeper runs is left running (the next start adopts it), every
   * other is ended (the next start recovers its turn).
   */
  async shutdown(): Promise<void> {
    this.#stopping = true;
    const live = [...this.#live.values()];
    for (const { run } of live) run.dispatch({ type: run.kept ? "detach" : "shutdown" });
    await Promise.all(live.map(({ done }) => done));
  }

  /** One turn's run, then what its end frees: its requests, its place here, the session's next turn. */
  async #recoverLost(turnId: string): Promise<void> {
    this.#options.logger.warn("the keeper went away under a running turn; recovering it", { turn: turnId });
    await this.#options
      .recoverLost?.(turnId)
      .catch((error: unknown) =>
        this.#options.logger.error("recovering a turn failed", { turn: turnId, error: describeError(error) }),
      );
  }

  async #runToEnd(run: TurnRun, adopt?: { process: CliProcess; through: number }): Promise<void> {
    try {
      await run.run(adopt);
    } finally {
      const leftToKeeper = this.#stopping && run.kept && run.state.kind === "left";
      this.#options.secrets.releaseTurn(run.turn.id, { left: leftToKeeper });
      this.#options.permissions.releaseTurn(run.turn.id);
      this.#live.delete(run.turn.id);
      if (!this.#stopping) {
        if (run.lost) await this.#recoverLost(run.turn.id);
        await this.#durable(run.turn.id);
        this.kick(run.turn.sessionId);
      }
    }
  }

  /**
   * Records a turn's end without an fsync of its own on the loop (ten turns ending together would be
   * ten in a row); whoever acts on the end next (the session's next turn, a cancel's answer) awaits
   * `#durable` first, where the ends of the moment share one fsync on the thread pool. A journal that
   * refuses (the turn ended meanwhile) is logged, not thrown.
   */
  #end(turnId: string, outcome: TurnOutcome): void {
    const { journal, logger } = this.#options;
    try {
      journal.maintenance.deferDurability(() => this.#record(turnId, outcome));
    } catch (error) {
      logger.error("turn end not recorded", { turn: turnId, error: describeError(error) });
    }
  }

  async #durable(turnId: string): Promise<void> {
    try {
      await this.#options.journal.maintenance.sync();
    } catch (error) {
      this.#options.logger.error("turn end not synced to disk", {
        turn: turnId,
        error: describeError(error),
      });
    }
  }

  #record(turnId: string, outcome: TurnOutcome): void {
    const { journal, logger } = this.#options;
    const turn = journal.turns.getTurn(turnId);
    if (!turn || !isActiveTurnPhase(turn.phase)) return;
    // A bridge that was unusable before the turn did anything: safe to run the turn once more.
    if (
      outcome.phase === "failed" &&
      outcome.error.code === TurnErrorCode.bridgeUnavailable &&
      turn.effects.length === 0 &&
      turn.attempt < 2
    ) {
      const replay = journal.turns.replayTurn(turnId, outcome.error);
      logger.warn("turn replayed after an unusable bridge", { turn: turnId, replay: replay.id });
      return;
    }
    if (outcome.phase === "failed") {
      journal.turns.transition(turnId, {
        phase: "failed",
        cause: { type: "error", code: outcome.error.code, message: outcome.error.message },
        error: outcome.error,
      });
    } else if (outcome.phase === "cancelled") {
      journal.turns.transition(turnId, {
        phase: "cancelled",
        error: { code: "cancelled", message: "cancelled by the user" },
      });
    } else {
      journal.turns.transition(turnId, { phase: "completed" });
    }
    logger.info("turn ended", { turn: turnId, phase: outcome.phase });
  }
}
