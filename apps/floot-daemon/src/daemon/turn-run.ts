import {
  type BackendAdapter,
  type CliProcessDeps,
  type CliSpawner,
  CliStartError,
  type ConfinementSpec,
  type ConversationRef,
  type KeeperClient,
  type McpMount,
  mintSpawnMarker,
  type RunningTurn,
  runTurn,
  type ToolGateSpec,
  type TurnOutcome,
  type TurnResult,
} from "@bridgeworks/backend-adapters";
import type { CliProcess, SessionRecord, TurnError, TurnRecord } from "@bridgeworks/protocol";
import { describeError, type Logger } from "@bridgeworks/runtime";
import type { JournalEvents, JournalSessions, JournalTurns } from "@bridgeworks/turn-journal";
import type { CliStartSlots, StartSlot } from "./cli-start-slots.js";
import { effectFreeToolsOf, markEffectFree } from "./effect-free-tools.js";
import { makeDirectories } from "./make-directories.js";
import { flootToolNames } from "./mcp-tool-definitions.js";
import { permissionPromptToolName } from "./permission-tool.js";
import type { TurnContext } from "./secret-broker.js";
import type { SessionStore } from "./session-store.js";
import type { Trace } from "./trace.js";
import { isOver, nextTurnRunState, type TurnRunEvent, type TurnRunState } from "./turn-run-state.js";

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
  /** The same for a turn whose CLI an earlier daemon started: handed to its shim and hooks to rebind. */
  adopt(context: TurnContext): TurnMount;
}

/** What a turn's run uses of the journal: its session, its phases and its CLI's stream. */
export interface TurnRunJournal {
  sessions: Pick<JournalSessions, "getSession">;
  turns: Pick<JournalTurns, "transition" | "conversationEstablished">;
  events: Pick<JournalEvents, "appendEvents">;
}

/** What one turn's run needs from the daemon. */
export interface TurnRunDeps {
  journal: TurnRunJournal;
  sessions: SessionStore;
  mounts: TurnMounts;
  adapterFor(session: SessionRecord): BackendAdapter;
  confine(session: SessionRecord, workspace: string, turnId: string): Promise<ConfinementSpec | undefined>;
  startSlots: CliStartSlots;
  spawner: CliSpawner;
  /** The state dir's keeper while it is connected: a CLI it starts outlives this daemon. */
  keeper(): KeeperClient | undefined;
  logger: Logger;
  toolTimeoutMs: number;
  cliNice: number;
  trace: Trace;
  /** Journals the turn's end (its coordinator shares the fsync). */
  record(turnId: string, outcome: TurnOutcome): void;
}

/** The session's workspace could not be made: the turn fails naming it. */
class WorkspaceError extends Error {}

/**
 * One turn's run in this daemon: its steps (mount, workspace, sandbox, a start slot, the CLI, its
 * exit) and, between them, its state (turn-run-state.ts), which cancels and a shutdown move too. A
 * step whose state is over stops there; the end is journaled by the transition that ends it.
 */
export class TurnRun {
  readonly turn: TurnRecord;
  readonly #deps: TurnRunDeps;
  #state: TurnRunState = { kind: "preparing" };
  readonly #stopWaiting = new AbortController();
  #running: RunningTurn | undefined;
  /** The CLI's stop asked for by a cancel or a shutdown, once it runs. */
  #stopping: Promise<unknown> | undefined;
  effectFreeTools: ReadonlySet<string> | undefined;
  spawnMarker: string | undefined;
  /** Whether its CLI is the keeper's (a daemon that stops leaves it running). */
  kept = false;
  /** Its keeper went away: the turn is left for recovery to decide on (`recover`). */
  lost = false;
  place: { workspace: string; confinement: ConfinementSpec | undefined } | undefined;

  constructor(turn: TurnRecord, deps: TurnRunDeps) {
    this.turn = turn;
    this.#deps = deps;
  }

  get state(): TurnRunState {
    return this.#state;
  }

  get pid(): number | undefined {
    return this.#running?.identity.pid;
  }

  /** Moves the run's state and does what the transition says. */
  dispatch(event: TurnRunEvent): void {
    const { state, effects } = nextTurnRunState(this.#state, event);
    this.#state = state;
    for (const effect of effects) {
      if (effect.type === "record") {
        this.#deps.record(this.turn.id, effect.outcome);
        // Its end is journaled: the keeper may forget the CLI and its spool.
        this.#running?.release?.();
      } else if (effect.type === "stop_waiting") this.#stopWaiting.abort();
      else if (effect.type === "detach_cli") this.#running?.detach?.();
      else if (effect.type === "recover") this.lost = true;
      else if (this.#running) this.#stopping = this.#running.stop(effect.graceMs).catch(() => {});
    }
  }

  /** Resolves once the stop a cancel asked of the CLI has ended it (at once when none was asked). */
  async stopped(): Promise<void> {
    await this.#stopping;
  }

  /**
   * The run's steps; resolves when the turn is over here (ended, or left to the next start). With
   * `adopt`, its CLI runs already, kept by the keeper since an earlier daemon: it is attached to
   * again, its journaled lines read (not journaled) again up to `through`.
   */
  async run(adopt?: { process: CliProcess; through: number }): Promise<void> {
    const { journal } = this.#deps;
    const context: TurnContext = { turnId: this.turn.id, sessionId: this.turn.sessionId };
    let mount: TurnMount | undefined;
    let slot: StartSlot | undefined;
    try {
      const session = journal.sessions.getSession(this.turn.sessionId)!;
      this.effectFreeTools = new Set(
        effectFreeToolsOf(session.backend, this.#deps.sessions.options(session.id)),
      );
      mount = adopt === undefined ? this.#deps.mounts.mount(context) : this.#deps.mounts.adopt(context);
      const workspace = await this.#provision(session);
      const confinement = await this.#deps.confine(session, workspace, this.turn.id);
      this.place = { workspace, confinement };
      if (adopt !== undefined) {
        await this.#adopt(session, workspace, mount, confinement, adopt);
        if (isOver(this.#state)) return;
        this.dispatch(endOf(await this.#running!.result));
        return;
      }
      this.#deps.trace("turn:starting", { turnId: this.turn.id });
      this.dispatch({ type: "prepared" });
      if (isOver(this.#state)) return;
      slot = await this.#deps.startSlots.take(this.#stopWaiting.signal).catch(() => undefined);
      if (slot === undefined || isOver(this.#state)) return;
      this.dispatch({ type: "slot_taken" });
      await this.#start(session, workspace, mount, confinement, () => slot?.release());
      if (isOver(this.#state)) return;
      this.dispatch(endOf(await this.#running!.result));
    } catch (error) {
      const failure = failureOf(error);
      if (this.#state.kind !== "ended" && this.#state.kind !== "left")
        this.#deps.logger.error("turn could not run", {
          turn: this.turn.id,
          code: failure.code,
          error: failure.message,
        });
      else if (this.#state.kind === "ended")
        this.#deps.logger.info("turn cancelled while its CLI started", { turn: this.turn.id });
      this.dispatch({ type: "failed", error: failure });
    } finally {
      slot?.release();
      mount?.release();
    }
  }

  /** Spawns the CLI (journaled `spawning` with its marker before it exists, `running` with its pid). */
  async #start(
    session: SessionRecord,
    workspace: string,
    mount: TurnMount,
    confinement: ConfinementSpec | undefined,
    firstEvent: () => void,
  ): Promise<void> {
    const { journal, trace } = this.#deps;
    const turn = this.turn;
    const prepared = this.#prepare(session, workspace, mount, confinement);
    // Journaled before the process exists: Claude's conversation id is the daemon's, and the marker
    // lets the next start find the CLI should this daemon die before its pid is journaled.
    const spawnMarker = mintSpawnMarker();
    this.spawnMarker = spawnMarker;
    journal.turns.transition(turn.id, {
      phase: "spawning",
      spawnMarker,
      ...(prepared.conversationId !== undefined && { conversationId: prepared.conversationId }),
    });
    trace("turn:before-spawn", { turnId: turn.id, spawnMarker });
    const effectFree = this.effectFreeTools ?? new Set<string>();
    const starting = runTurn(
      { ...prepared, launch: { ...prepared.launch, spawnMarker, nice: this.#deps.cliNice } },
      {
        onSpawned: (identity) => {
          trace("turn:spawned", { turnId: turn.id, pid: identity.pid });
          journal.turns.transition(turn.id, { phase: "running", process: identity });
          trace("turn:running", { turnId: turn.id, pid: identity.pid });
        },
        onEvent: (event, through) => {
          firstEvent();
          journal.events.appendEvents(turn.id, [markEffectFree(event, effectFree)], through);
          trace("turn:event", { turnId: turn.id, type: event.type });
        },
      },
      this.#cliDeps(),
    );
    this.#running = await starting;
    this.#deps.logger.info("turn spawned", {
      turn: turn.id,
      session: turn.sessionId,
      pid: this.#running.identity.pid,
    });
    this.dispatch({ type: "spawned" });
  }

  /** Attaches to the CLI the keeper kept for this turn, and reads on where the journal ends. */
  async #adopt(
    session: SessionRecord,
    workspace: string,
    mount: TurnMount,
    confinement: ConfinementSpec | undefined,
    adopt: { process: CliProcess; through: number },
  ): Promise<void> {
    const keeper = this.#deps.keeper();
    if (keeper === undefined) throw new Error("the keeper went away before its CLI was adopted");
    const prepared = this.#prepare(session, workspace, mount, confinement);
    const effectFree = this.effectFreeTools ?? new Set<string>();
    this.spawnMarker = this.turn.spawnMarker;
    this.kept = true;
    this.#running = await runTurn(
      prepared,
      {
        onEvent: (event, through) => {
          this.#deps.journal.events.appendEvents(this.turn.id, [markEffectFree(event, effectFree)], through);
          this.#deps.trace("turn:event", { turnId: this.turn.id, type: event.type });
        },
      },
      { kept: { keeper, id: this.turn.id, adopt: { identity: adopt.process, through: adopt.through } } },
    );
    this.#deps.trace("adoption:attached", { turnId: this.turn.id, through: adopt.through });
    this.#deps.logger.info("turn adopted from the keeper", {
      turn: this.turn.id,
      pid: adopt.process.pid,
      through: adopt.through,
    });
    this.dispatch({ type: "adopted" });
  }

  /** Through the keeper while it is there (the CLI outlives this daemon), else the spawner. */
  #cliDeps(): CliProcessDeps {
    const keeper = this.#deps.keeper();
    if (keeper === undefined) return { spawner: this.#deps.spawner };
    this.kept = true;
    return { kept: { keeper, id: this.turn.id } };
  }

  #prepare(
    session: SessionRecord,
    workspace: string,
    mount: TurnMount,
    confinement: ConfinementSpec | undefined,
  ) {
    return this.#deps.adapterFor(session).prepareTurn({
      prompt: this.turn.input.prompt,
      cwd: workspace,
      ...this.#conversationOf(session),
      mcp: {
        mount: mount.mount,
        tools: flootToolNames,
        toolTimeoutMs: this.#deps.toolTimeoutMs,
        permissionPromptTool: permissionPromptToolName,
      },
      gate: mount.gate,
      ...(confinement !== undefined && { confinement }),
    });
  }

  /** A session's workspace is made at its first turn and made again whenever it is found missing. */
  async #provision(session: SessionRecord): Promise<string> {
    const workspace = this.#deps.sessions.workspace(session.id);
    try {
      await makeDirectories(workspace);
    } catch (error) {
      throw new WorkspaceError(
        `the session's workspace ${workspace} could not be created: ${describeError(error)}`,
      );
    }
    return workspace;
  }

  #conversationOf(session: SessionRecord): { conversation?: ConversationRef } {
    const id = session.conversationId;
    if (id === undefined) return {};
    const established = this.#deps.journal.turns.conversationEstablished(session.id, id, this.turn.id);
    return { conversation: { id, established } };
  }
}

/** A kept CLI whose keeper went away ended in a way nobody saw: recovery decides, not its output. */
function endOf(result: TurnResult): TurnRunEvent {
  return result.exit.unknown ? { type: "cli_lost" } : { type: "exited", outcome: result.outcome };
}

function failureOf(error: unknown): TurnError {
  if (error instanceof CliStartError) return { code: error.code, message: error.message };
  if (error instanceof WorkspaceError) return { code: "workspace_unavailable", message: error.message };
  return { code: "spawn_failed", message: describeError(error) };
}
