import { mkdir } from "node:fs/promises";
import {
  type BackendAdapter,
  type ConversationRef,
  type McpMount,
  mintSpawnMarker,
  type RunningTurn,
  runTurn,
  TurnErrorCode,
  type TurnOutcome,
} from "@bridgeworks/backend-adapters";
import {
  isActiveTurnPhase,
  isTerminalTurnPhase,
  type SessionRecord,
  type TurnRecord,
} from "@bridgeworks/protocol";
import { describeError, type Logger } from "@bridgeworks/runtime";
import { JournalError, type TurnJournal } from "@bridgeworks/turn-journal";
import { flootToolNames } from "./mcp-tools.js";
import type { SecretBroker, TurnContext } from "./secret-broker.js";
import type { SessionStore } from "./session-store.js";
import { sleepSync } from "./sleep-sync.js";

export interface TurnMounts {
  /** A fresh token on the current generation's socket; `release` revokes it and ends its connections. */
  mount(context: TurnContext): { mount: McpMount; release(): void };
}

export interface TurnCoordinatorOptions {
  journal: TurnJournal;
  sessions: SessionStore;
  secrets: SecretBroker;
  mounts: TurnMounts;
  adapterFor(session: SessionRecord): BackendAdapter;
  logger: Logger;
  /** How long one tool call may wait (a human answering a secret form). */
  toolTimeoutMs: number;
  /** Fault injection for tests: hold an accepted turn this long before spawning. */
  holdBeforeSpawnMs?: number;
  /**
   * Fault injection for tests: block this daemon this long after a CLI is spawned and before its pid
   * is journaled, the window only the spawn marker covers.
   */
  holdAfterSpawnMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

interface LiveTurn {
  running?: RunningTurn;
  cancelRequested: boolean;
}

/**
 * Runs each session's active turn, one CLI process per turn and one turn per session at a time:
 * spawning (with the spawn marker the CLI will carry) -> running (pid and start time journaled first)
 * -> one terminal phase, then the next queued turn. Every event goes to the journal before the next
 * line of the CLI is read.
 */
export class TurnCoordinator {
  readonly #options: TurnCoordinatorOptions;
  readonly #live = new Map<string, LiveTurn>();
  readonly #sleep: (ms: number) => Promise<void>;
  #stopping = false;

  constructor(options: TurnCoordinatorOptions) {
    this.#options = options;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Starts whatever every session should be running now (after recovery, at start). */
  resumeAll(): void {
    for (const session of this.#options.journal.listSessions()) this.kick(session.id);
  }

  /** Starts the session's accepted turn, or promotes its next queued one, unless one runs here already. */
  kick(sessionId: string): void {
    if (this.#stopping) return;
    const { journal } = this.#options;
    const session = journal.getSession(sessionId);
    if (!session) return;
    let turn = session.activeTurnId !== undefined ? journal.getTurn(session.activeTurnId) : undefined;
    if (!turn) turn = journal.promoteNextTurn(sessionId);
    if (turn?.phase !== "accepted" || this.#live.has(turn.id)) return;
    const live: LiveTurn = { cancelRequested: false };
    this.#live.set(turn.id, live);
    void this.#run(turn, live);
  }

  isLive(turnId: string): boolean {
    return this.#live.has(turnId);
  }

  /** Cancels a queued, accepted or running turn; a running CLI's process group is ended first. */
  async cancel(turnId: string): Promise<TurnRecord> {
    const { journal } = this.#options;
    const turn = journal.getTurn(turnId);
    if (!turn) throw new JournalError("turn_not_found", `turn ${turnId} does not exist`);
    if (isTerminalTurnPhase(turn.phase)) {
      throw new JournalError("invalid_transition", `turn ${turnId} is ${turn.phase}; it has ended`);
    }
    const live = this.#live.get(turnId);
    if (live) {
      live.cancelRequested = true;
      if (live.running) await live.running.stop();
      else this.#end(turnId, { phase: "cancelled" });
      return journal.getTurn(turnId)!;
    }
    const cancelled = journal.transition(turnId, {
      phase: "cancelled",
      error: { code: "cancelled", message: "cancelled by the user" },
    });
    this.kick(turn.sessionId);
    return cancelled;
  }

  /** Ends every CLI this daemon runs and journals nothing more: the next start recovers their turns. */
  async shutdown(): Promise<void> {
    this.#stopping = true;
    await Promise.all([...this.#live.values()].map((live) => live.running?.stop(1_000).catch(() => {})));
  }

  async #run(turn: TurnRecord, live: LiveTurn): Promise<void> {
    const { journal, logger } = this.#options;
    const context: TurnContext = { turnId: turn.id, sessionId: turn.sessionId };
    const mount = this.#options.mounts.mount(context);
    try {
      const session = journal.getSession(turn.sessionId)!;
      const workspace = await this.#provision(session);
      if (this.#options.holdBeforeSpawnMs) await this.#sleep(this.#options.holdBeforeSpawnMs);
      if (live.cancelRequested || this.#stopping) return;
      const prepared = this.#options.adapterFor(session).prepareTurn({
        prompt: turn.input.prompt,
        cwd: workspace,
        ...this.#conversationOf(session, turn),
        mcp: { mount: mount.mount, tools: flootToolNames, toolTimeoutMs: this.#options.toolTimeoutMs },
      });
      // Journaled before the process exists: Claude's conversation id is the daemon's, and the marker
      // lets the next start find the CLI should this daemon die before its pid is journaled.
      const spawnMarker = mintSpawnMarker();
      journal.transition(turn.id, {
        phase: "spawning",
        spawnMarker,
        ...(prepared.conversationId !== undefined && { conversationId: prepared.conversationId }),
      });
      live.running = runTurn(
        { ...prepared, launch: { ...prepared.launch, spawnMarker } },
        {
          onSpawned: (identity) => {
            const hold = this.#options.holdAfterSpawnMs;
            if (hold) sleepSync(hold);
            journal.transition(turn.id, { phase: "running", process: identity });
          },
          onEvent: (event) => journal.appendEvents(turn.id, [event]),
        },
      );
      logger.info("turn spawned", {
        turn: turn.id,
        session: turn.sessionId,
        pid: live.running.identity.pid,
      });
      const result = await live.running.result;
      if (this.#stopping) return;
      const outcome: TurnOutcome = live.cancelRequested ? { phase: "cancelled" } : result.outcome;
      this.#end(turn.id, outcome);
    } catch (error) {
      if (this.#stopping) return;
      const message = describeError(error);
      logger.error("turn could not run", { turn: turn.id, error: message });
      this.#end(turn.id, { phase: "failed", error: { code: "spawn_failed", message } });
    } finally {
      mount.release();
      this.#options.secrets.releaseTurn(turn.id);
      this.#live.delete(turn.id);
      if (!this.#stopping) this.kick(turn.sessionId);
    }
  }

  /** A session's workspace is made at its first turn and made again whenever it is found missing. */
  async #provision(session: SessionRecord): Promise<string> {
    const workspace = this.#options.sessions.workspace(session.id);
    await mkdir(workspace, { recursive: true, mode: 0o700 });
    return workspace;
  }

  #conversationOf(session: SessionRecord, turn: TurnRecord): { conversation?: ConversationRef } {
    const id = session.conversationId;
    if (id === undefined) return {};
    const established = this.#options.journal
      .listTurns(session.id)
      .some((other) => other.id !== turn.id && other.conversationId === id && other.phase === "completed");
    return { conversation: { id, established } };
  }

  #end(turnId: string, outcome: TurnOutcome): void {
    const { journal, logger } = this.#options;
    const turn = journal.getTurn(turnId);
    if (!turn || !isActiveTurnPhase(turn.phase)) return;
    // A bridge that was unusable before the turn did anything: safe to run the turn once more.
    if (
      outcome.phase === "failed" &&
      outcome.error.code === TurnErrorCode.bridgeUnavailable &&
      turn.effects.length === 0 &&
      turn.attempt < 2
    ) {
      const replay = journal.replayTurn(turnId, outcome.error);
      logger.warn("turn replayed after an unusable bridge", { turn: turnId, replay: replay.id });
      return;
    }
    if (outcome.phase === "failed") {
      journal.transition(turnId, {
        phase: "failed",
        cause: { type: "error", code: outcome.error.code, message: outcome.error.message },
        error: outcome.error,
      });
    } else if (outcome.phase === "cancelled") {
      journal.transition(turnId, {
        phase: "cancelled",
        error: { code: "cancelled", message: "cancelled by the user" },
      });
    } else {
      journal.transition(turnId, { phase: "completed" });
    }
    logger.info("turn ended", { turn: turnId, phase: outcome.phase });
  }
}
