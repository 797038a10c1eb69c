import {
  type BackendAdapter,
  type CliSpawner,
  CliStartError,
  type ConfinementSpec,
  type ConversationRef,
  type McpMount,
  mintSpawnMarker,
  type RunningTurn,
  runTurn,
  type ToolGateSpec,
  TurnErrorCode,
  type TurnOutcome,
} from "@bridgeworks/backend-adapters";
import {
  isActiveTurnPhase,
  isTerminalTurnPhase,
  type SessionRecord,
  type TurnError,
  type TurnRecord,
} from "@bridgeworks/protocol";
import { describeError, type Logger } from "@bridgeworks/runtime";
import { JournalError, type TurnJournal } from "@bridgeworks/turn-journal";
import type { CliStartSlots, StartSlot } from "./cli-start-slots.js";
import { effectFreeToolsOf, markEffectFree } from "./effect-free-tools.js";
import { makeDirectories } from "./make-directories.js";
import { flootToolNames } from "./mcp-tool-definitions.js";
import type { PermissionBroker } from "./permission-broker.js";
import { permissionPromptToolName } from "./permission-tool.js";
import type { SecretBroker, TurnContext } from "./secret-broker.js";
import type { SessionStore } from "./session-store.js";
import { noTrace, type Trace } from "./trace.js";
import { hiddenPathOf } from "./turn-confinement.js";
import type { LiveTurnProcess } from "./turn-membership.js";

export interface TurnMount {
  mount: McpMount;
  /** The pre-tool gate on the same socket and token. */
  gate: ToolGateSpec;
  /** Revokes the token and ends its connections. */
  release(): void;
}

export interface TurnMounts {
  /** A fresh token on the current generation's socket, for the turn's MCP server and its gate. */
  mount(context: TurnContext): TurnMount;
}

export interface TurnCoordinatorOptions {
  journal: TurnJournal;
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
  trace?: Trace;
}

interface LiveTurn {
  /** Its CLI being started: settles once `running` is set, or the start failed. */
  starting?: Promise<unknown>;
  running?: RunningTurn;
  cancelRequested: boolean;
  /** Ends its wait for a start slot (a cancel, a shutdown). */
  stopWaiting: AbortController;
  /** Known once the turn's session was read: what its gate admits without an effect. */
  effectFreeTools?: ReadonlySet<string>;
  /** The marker its CLI carries, from just before the spawn. */
  spawnMarker?: string;
  /** Where it works and what its commands may reach; no confinement for an unconfined session. */
  place?: { workspace: string; confinement: ConfinementSpec | undefined };
}

/** The session's workspace could not be made: the turn fails naming it. */
class WorkspaceError extends Error {}

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
  readonly #live = new Map<string, LiveTurn>();
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
    const session = journal.getSession(sessionId);
    if (!session) return;
    let turn = session.activeTurnId !== undefined ? journal.getTurn(session.activeTurnId) : undefined;
    if (!turn) turn = journal.promoteNextTurn(sessionId);
    if (turn?.phase !== "accepted" || this.#live.has(turn.id)) return;
    const live: LiveTurn = { cancelRequested: false, stopWaiting: new AbortController() };
    this.#live.set(turn.id, live);
    this.#run(turn, live).catch((error: unknown) => {
      this.#options.logger.error("turn bookkeeping failed", {
        turn: turn.id,
        error: describeError(error),
      });
    });
  }

  isLive(turnId: string): boolean {
    return this.#live.has(turnId);
  }

  /** The CLIs of the turns running here (pid 0 while a CLI is being spawned: its marker still counts). */
  liveTurnProcesses(): LiveTurnProcess[] {
    return [...this.#live].flatMap(([turnId, live]) =>
      live.spawnMarker === undefined
        ? []
        : [{ turnId, pid: live.running?.identity.pid ?? 0, spawnMarker: live.spawnMarker }],
    );
  }

  /** For a confined live turn: the path a file tool call would touch outside its bounds. */
  outOfBounds(
    turnId: string,
    toolName: string,
    input: Readonly<Record<string, unknown>>,
  ): string | undefined {
    const place = this.#live.get(turnId)?.place;
    if (place?.confinement === undefined) return undefined;
    return hiddenPathOf(place.confinement, place.workspace, toolName, input);
  }

  /** The tools a live turn's gate admits without an effect; undefined for a turn not running here. */
  effectFreeToolsOf(turnId: string): ReadonlySet<string> | undefined {
    return this.#live.get(turnId)?.effectFreeTools;
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
      live.stopWaiting.abort();
      if (live.running) await live.running.stop();
      else this.#end(turnId, { phase: "cancelled" });
      await this.#durable(turnId);
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
    await Promise.all(
      [...this.#live.values()].map(async (live) => {
        live.stopWaiting.abort();
        await live.starting;
        await live.running?.stop(1_000).catch(() => {});
      }),
    );
  }

  async #run(turn: TurnRecord, live: LiveTurn): Promise<void> {
    const { journal, logger } = this.#options;
    const context: TurnContext = { turnId: turn.id, sessionId: turn.sessionId };
    let mount: TurnMount | undefined;
    let slot: StartSlot | undefined;
    try {
      const session = journal.getSession(turn.sessionId)!;
      const options = this.#options.sessions.options(session.id);
      live.effectFreeTools = new Set(effectFreeToolsOf(session.backend, options));
      mount = this.#options.mounts.mount(context);
      const workspace = await this.#provision(session);
      const confinement = await this.#options.confine(session, workspace, turn.id);
      live.place = { workspace, confinement };
      this.#trace("turn:starting", { turnId: turn.id });
      if (live.cancelRequested || this.#stopping) return;
      slot = await this.#options.startSlots.take(live.stopWaiting.signal).catch(() => undefined);
      if (!slot || live.cancelRequested || this.#stopping) return;
      const adapter = this.#options.adapterFor(session);
      const prepared = adapter.prepareTurn({
        prompt: turn.input.prompt,
        cwd: workspace,
        ...this.#conversationOf(session, turn),
        mcp: {
          mount: mount.mount,
          tools: flootToolNames,
          toolTimeoutMs: this.#options.toolTimeoutMs,
          permissionPromptTool: permissionPromptToolName,
        },
        gate: mount.gate,
        ...(confinement !== undefined && { confinement }),
      });
      // Journaled before the process exists: Claude's conversation id is the daemon's, and the marker
      // lets the next start find the CLI should this daemon die before its pid is journaled.
      const spawnMarker = mintSpawnMarker();
      live.spawnMarker = spawnMarker;
      journal.transition(turn.id, {
        phase: "spawning",
        spawnMarker,
        ...(prepared.conversationId !== undefined && { conversationId: prepared.conversationId }),
      });
      this.#trace("turn:before-spawn", { turnId: turn.id, spawnMarker });
      const effectFree = live.effectFreeTools;
      const starting = runTurn(
        { ...prepared, launch: { ...prepared.launch, spawnMarker, nice: this.#options.cliNice } },
        {
          onSpawned: (identity) => {
            this.#trace("turn:spawned", { turnId: turn.id, pid: identity.pid });
            journal.transition(turn.id, { phase: "running", process: identity });
            this.#trace("turn:running", { turnId: turn.id, pid: identity.pid });
          },
          onEvent: (event) => {
            slot?.release();
            journal.appendEvents(turn.id, [markEffectFree(event, effectFree)]);
            this.#trace("turn:event", { turnId: turn.id, type: event.type });
          },
        },
        { spawner: this.#options.spawner },
      );
      live.starting = starting.catch(() => {});
      live.running = await starting;
      // Shut down while it started: `shutdown` may have found nothing to stop yet. (A cancel then
      // ended the turn in the journal, so its `running` was refused and the CLI killed at once.)
      if (this.#stopping) await live.running.stop(1_000);
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
      // Cancelled while its CLI started: the turn ended then, its `running` was refused, the CLI killed.
      if (live.cancelRequested) {
        logger.info("turn cancelled while its CLI started", { turn: turn.id });
        this.#end(turn.id, { phase: "cancelled" });
        return;
      }
      const failure = failureOf(error);
      logger.error("turn could not run", {
        turn: turn.id,
        code: failure.code,
        error: failure.message,
      });
      this.#end(turn.id, { phase: "failed", error: failure });
    } finally {
      slot?.release();
      mount?.release();
      this.#options.secrets.releaseTurn(turn.id);
      this.#options.permissions.releaseTurn(turn.id);
      this.#live.delete(turn.id);
      if (!this.#stopping) {
        await this.#durable(turn.id);
        this.kick(turn.sessionId);
      }
    }
  }

  /** A session's workspace is made at its first turn and made again whenever it is found missing. */
  async #provision(session: SessionRecord): Promise<string> {
    const workspace = this.#options.sessions.workspace(session.id);
    try {
      await makeDirectories(workspace);
    } catch (error) {
      throw new WorkspaceError(
        `the session's workspace ${workspace} could not be created: ${describeError(error)}`,
      );
    }
    return workspace;
  }

  #conversationOf(session: SessionRecord, turn: TurnRecord): { conversation?: ConversationRef } {
    const id = session.conversationId;
    if (id === undefined) return {};
    const established = this.#options.journal.conversationEstablished(session.id, id, turn.id);
    return { conversation: { id, established } };
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
      journal.deferDurability(() => this.#record(turnId, outcome));
    } catch (error) {
      logger.error("turn end not recorded", { turn: turnId, error: describeError(error) });
    }
  }

  async #durable(turnId: string): Promise<void> {
    try {
      await this.#options.journal.sync();
    } catch (error) {
      this.#options.logger.error("turn end not synced to disk", {
        turn: turnId,
        error: describeError(error),
      });
    }
  }

  #record(turnId: string, outcome: TurnOutcome): void {
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

function failureOf(error: unknown): TurnError {
  if (error instanceof CliStartError) return { code: error.code, message: error.message };
  if (error instanceof WorkspaceError) return { code: "workspace_unavailable", message: error.message };
  return { code: "spawn_failed", message: describeError(error) };
}
