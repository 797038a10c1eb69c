import { randomBytes, randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { startSpawnerProcess } from "@bridgeworks/backend-adapters";
import {
  type BridgeGeneration,
  mintToken,
  startBridgeGeneration,
  TurnTokenRegistry,
  writePrivateFileAtomic,
} from "@bridgeworks/control-channel";
import type { FlootDaemonFile } from "@bridgeworks/protocol";
import { describeError, type Logger } from "@bridgeworks/runtime";
import { openJournal, type TurnJournal } from "@bridgeworks/turn-journal";
import { ensurePrivateDir } from "../private-dir.js";
import { apiSocketName, daemonFileName, journalFileName, lockFileName } from "../state-dir.js";
import { describeBackends } from "./backend-status.js";
import { besideBundle } from "./bundled-helpers.js";
import { defaultCliNice } from "./cli-nice.js";
import { CliStartSlots, defaultCliStarts } from "./cli-start-slots.js";
import {
  lastPortFileName,
  readLastPort,
  readPreviousDaemonFile,
  removeOwnDaemonFile,
  writeLastPort,
} from "./daemon-file.js";
import { type ApiServer, startApiServer } from "./http/api-server.js";
import { createDecisionActors } from "./http/decision-actor.js";
import { journalMasking } from "./journal-masking.js";
import { connectTheKeeper, rebindDirName } from "./keeper-link.js";
import { Moments } from "./moments.js";
import { startNotifyCommand } from "./notify-command.js";
import { createPeerProcessLookup } from "./peer-process.js";
import { PermissionBroker } from "./permission-broker.js";
import { type RecoveryReport, recoverTurns, turnsAtStart } from "./recovery.js";
import { removeDeadDaemonFiles, resolveRuntimeDir, secretsDirName } from "./runtime-dir.js";
import { createSandboxProbe } from "./sandbox-status.js";
import { SecretBroker, type TurnContext } from "./secret-broker.js";
import { SecretMask } from "./secret-mask.js";
import { SecretVault } from "./secret-vault.js";
import { adapterFor, sessionRulesOf } from "./session-adapter.js";
import { SessionStore } from "./session-store.js";
import { type DaemonSettings, readDaemonSettings } from "./settings.js";
import { acquireStateLock, type StateLock } from "./state-lock.js";
import { createToolGate } from "./tool-gate.js";
import { diagnosticsTrace, type Trace } from "./trace.js";
import { adoptableTurns } from "./turn-adoption.js";
import { confinementOf } from "./turn-confinement.js";
import { TurnCoordinator } from "./turn-coordinator.js";
import { createTurnMounts } from "./turn-mounts.js";
import { UiAuth } from "./ui-auth.js";

export interface DaemonOptions {
  stateDir: string;
  /**
   * 0 picks a free port. Unset: the port of the previous daemon on this state dir when it is free (so an
   * open web UI finds its daemon again after a restart), else a free one.
   */
  port?: number;
  /** The environment the CLIs inherit (the user's own configuration and login) and knobs are read from. */
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /** Where the shim script is; default: `shim.mjs` beside the bundle, else control-channel's. */
  shimScript?: string;
  /** Where the gate hook is; default: `gate-hook.mjs` beside the bundle, else control-channel's. */
  gateHookScript?: string;
  /** Where the CLI spawner is; default: `spawner.mjs` beside the bundle, else backend-adapters'. */
  spawnerScript?: string;
  /** Where the CLI keeper is; default: `keeper.mjs` beside the bundle, else backend-adapters'. */
  keeperScript?: string;
  /** Default: trace points on `node:diagnostics_channel` (see trace.ts). */
  trace?: Trace;
  /** The web UI's static files, when installed. */
  uiDir?: string;
  /**
   * The nice value (0-19) of every CLI the daemon starts, and of its scheduling group; 0 leaves them at
   * the daemon's own priority. Default `defaultCliNice`.
   */
  cliNice?: number;
  /** How many CLIs may be starting at once (`CliStartSlots`). Default: the machine's cores. */
  cliStarts?: number;
  /** Default: read from `env` (`readDaemonSettings`), which throws `SettingError` on a bad value. */
  settings?: DaemonSettings;
}

export interface RunningDaemon {
  port: number;
  generation: number;
  stateDir: string;
  recovery: RecoveryReport;
  /** A fresh one-time sign-in link for the web UI (for the terminal only: never log it). */
  signInLink(): string;
  stop(): Promise<void>;
}

/**
 * Starts a daemon on `stateDir`, in this order: take the state-dir lock (a second daemon fails here,
 * having touched nothing), open the journal, fence leftover CLIs and recover their turns, bump the
 * bridge generation, serve its MCP socket (older generations removed), serve the HTTP API, start the
 * turns that should run, and only then write `daemon.json`.
 */
export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const { stateDir, logger } = options;
  // Checked before anything is touched: a bad setting stops the start, naming the variable.
  const settings = options.settings ?? readDaemonSettings(options.env);
  ensurePrivateDir(stateDir, "state dir");
  const lock = acquireStateLock(join(stateDir, lockFileName));
  const cleanups: (() => Promise<void> | void)[] = [() => lock.release()];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) {
      try {
        await step();
      } catch (error) {
        logger.warn("cleanup step failed", {
          error: describeError(error),
        });
      }
    }
  };
  try {
    return await startLocked({ ...options, settings }, lock, cleanups, cleanup);
  } catch (error) {
    await cleanup();
    throw error;
  }
}

async function startLocked(
  options: DaemonOptions & { settings: DaemonSettings },
  lock: StateLock,
  cleanups: (() => Promise<void> | void)[],
  cleanup: () => Promise<void>,
): Promise<RunningDaemon> {
  const { stateDir, env, logger } = options;
  const { settings } = options;
  // Its helper starts once the daemon is ready (or with the first turn): not on the path to ready.
  const spawner = startSpawnerProcess({
    script: options.spawnerScript ?? besideBundle("spawner.mjs"),
    onUnexpectedExit: (code, signal) =>
      logger.warn("CLI spawner exited; the next turn starts a new one", { code, signal }),
  });
  cleanups.push(() => spawner.close());
  // Every event is masked on the journal's one write path: no submitted secret reaches the journal, a
  // stream or the UI, whichever side wrote it.
  const mask = new SecretMask();
  const journal: TurnJournal = openJournal({
    path: join(stateDir, journalFileName),
    // A follower sees a stream event once the turn of the loop that read it has run its I/O, not after
    // a 50 ms batch: one commit for every CLI line that turn read, made after the requests it also read
    // were answered. Not fsynced one by one (the next effect, phase or gate commit fsyncs them).
    batch: { maxDelayMs: 0 },
    streamSynchronous: "NORMAL",
    // A checkpoint copies pages and fsyncs the database file: a worker thread does it, not the loop.
    checkpoint: "worker",
    transform: journalMasking(mask),
    onError: (error) => logger.error("journal background error", { error: String(error) }),
  });
  cleanups.push(() => journal.maintenance.close());

  const previous = readPreviousDaemonFile(join(stateDir, daemonFileName));
  const runtime = resolveRuntimeDir(stateDir, env);
  if (runtime.replaced)
    logger.warn("runtime dir replaced by a fresh private one", { ...runtime.replaced, path: runtime.path });
  const runtimeDir = runtime.path;
  removeDeadDaemonFiles(runtimeDir, previous.socket);
  // A fresh dir has a new name every start: leave none behind on a clean stop.
  if (runtime.replaced) cleanups.push(() => rmSync(runtimeDir, { recursive: true, force: true }));
  const vault = new SecretVault(join(runtimeDir, secretsDirName), randomUUID);
  const keeper = await connectTheKeeper(
    settings.keeper ? runtime : undefined,
    options.keeperScript ?? besideBundle("keeper.mjs"),
    logger,
  );
  cleanups.push(() => keeper.close());

  // A confined turn's commands reach neither the state dir nor any runtime dir of the daemon's.
  const confinementPlaces = {
    stateDir,
    runtimeRoot: runtime.replaced ? runtimeDir : dirname(runtimeDir),
  };
  const trace = options.trace ?? diagnosticsTrace();
  const kept = await adoptableTurns(keeper.client(), journal.turns, logger);
  if (kept.length > 0) trace("adoption:found", { turns: kept.map(({ turn }) => turn.id) });
  // The credential files of the turns it adopts stay: their commands may read them still.
  await vault.open(new Set(kept.map(({ turn }) => turn.id)));
  cleanups.push(() => vault.close());
  const recovery = await recoverTurns(journal, logger, {
    trace,
    withEffects: settings.afterCliLost,
    kept: new Set(kept.map(({ turn }) => turn.id)),
  });
  // FULL: its fsync also makes recovery's commits durable, before any turn runs.
  const generation = journal.maintenance.bumpGeneration();

  const sessions = new SessionStore(stateDir);
  let coordinator: TurnCoordinator | undefined;
  const secrets = new SecretBroker(journal, vault, (turn) => coordinator?.kick(turn.sessionId), mask);
  const permissions = new PermissionBroker({
    journal,
    rulesOf: (sessionId) => sessionRulesOf(sessionId, sessions, journal),
    timeoutOf: (sessionId) => sessions.options(sessionId).permissionTimeoutMs,
    startRetry: (turn) => coordinator?.kick(turn.sessionId),
    outOfBounds: (turnId, toolName, input) => coordinator?.outOfBounds(turnId, toolName, input),
  });
  // Two tokens per turn (turn-mounts.ts). The MCP one opens one connection: the shim's, before the
  // model's first call; a copy read out of the shim's memory later opens nothing.
  const tokens = new TurnTokenRegistry<TurnContext>(randomBytes, { singleUse: true });
  const gateTokens = new TurnTokenRegistry<TurnContext>(randomBytes);
  const gate = createToolGate({
    journal,
    effectFreeToolsOf: (turnId) => coordinator?.effectFreeToolsOf(turnId),
    trace,
    logger,
  });
  const bridge: BridgeGeneration<TurnContext> = await startBridgeGeneration<TurnContext>({
    bridgesDir: join(stateDir, "bridges"),
    generation,
    authorize: (token, channel) => (channel === "mcp" ? tokens : gateTokens).authorize(token),
    // The MCP SDK and ajv are half the bundle: loaded when the first turn's CLI connects, not at start.
    createServer: async (context) =>
      (await import("./mcp-tools.js")).createFlootMcpServer(context, secrets, permissions, logger),
    handleRequest: gate,
    onEvent: (event) => {
      if (event.type === "refused" || event.type === "error")
        logger.warn(`mcp socket ${event.type}`, { ...event });
    },
  });
  cleanups.push(() => bridge.server.close());

  coordinator = new TurnCoordinator({
    journal,
    sessions,
    secrets,
    permissions,
    logger,
    toolTimeoutMs: settings.toolTimeoutMs,
    cliNice: options.cliNice ?? defaultCliNice,
    spawner,
    startSlots: new CliStartSlots({
      limit: options.cliStarts ?? defaultCliStarts(),
      holdMs: settings.cliStartHoldMs,
    }),
    trace,
    keeper: () => keeper.client(),
    recoverLost: (turnId) =>
      recoverTurns(journal, logger, { trace, withEffects: settings.afterCliLost, only: new Set([turnId]) }),
    adapterFor: (session) =>
      adapterFor(session, sessionRulesOf(session.id, sessions, journal), sessions, env),
    confine: async (session, workspace, turnId) =>
      confinementOf(sessions.options(session.id).sandbox, confinementPlaces, {
        workspace,
        credentialDir: vault.turnDir(turnId),
        otherWorkspaces: await sessions.otherWorkspaces(session.id),
        ...(session.backend === "codex" && { scratchDir: await sessions.scratchDir(session.id) }),
      }),
    mounts: createTurnMounts({
      bridge,
      tokens,
      gateTokens,
      shim: { node: process.execPath, script: options.shimScript ?? besideBundle("shim.mjs") },
      gateHook: options.gateHookScript ?? besideBundle("gate-hook.mjs"),
      gateDeadlineMs: settings.gateTimeoutMs,
      ...(keeper.client() !== undefined && { rebindDir: join(runtimeDir, rebindDirName) }),
    }),
  });
  const running = coordinator;
  cleanups.push(() => running.shutdown());

  // Heard from here on; what recovery ended is announced once the daemon is up.
  const moments = new Moments(journal, logger);
  const notify = startNotifyCommand(moments, settings, { spawner, cwd: stateDir, env, logger });
  cleanups.push(() => moments.close(), notify);
  const sandboxStatus = createSandboxProbe(env);
  const startedAt = new Date().toISOString();
  const atStart = turnsAtStart(kept.length, recovery);
  const apiToken = mintToken(randomBytes);
  const uiAuth = new UiAuth({ stateDir });
  const api: ApiServer = await startApiServer(
    {
      journal,
      sessions,
      coordinator,
      secrets,
      permissions,
      backends: () => describeBackends(env, stateDir, sandboxStatus),
      sandboxStatus,
      token: apiToken,
      logger,
      status: () => ({ pid: process.pid, generation, stateDir, startedAt, atStart }),
      uiAuth,
      socketPath: join(runtimeDir, apiSocketName),
      actorOf: createDecisionActors({
        lookUpPeer: createPeerProcessLookup(),
        liveTurnProcesses: () => running.liveTurnProcesses(),
      }),
      connectionLimits: settings.connectionLimits,
      moments,
      ...(options.uiDir !== undefined && { uiDir: options.uiDir }),
    },
    // A clean stop removes daemon.json but not the last port: an open page finds its daemon again.
    options.port ?? previous.port ?? readLastPort(join(stateDir, lastPortFileName)) ?? 0,
    options.port === undefined,
  );
  cleanups.push(() => api.close());
  moments.linkTo(api.port);

  for (const { turn, process, through } of kept) coordinator.adopt(turn, process, through);
  coordinator.resume(recovery.outcomes.map((outcome) => outcome.turn.sessionId));

  const daemonFile: FlootDaemonFile = {
    port: api.port,
    token: apiToken,
    pid: process.pid,
    generation,
    socket: join(runtimeDir, apiSocketName),
  };
  const daemonFilePath = join(stateDir, daemonFileName);
  await writePrivateFileAtomic(daemonFilePath, `${JSON.stringify(daemonFile)}\n`);
  await writeLastPort(join(stateDir, lastPortFileName), api.port);
  cleanups.push(() => removeOwnDaemonFile(daemonFilePath));
  trace("daemon:announced", { generation });
  logger.info("daemon ready", {
    port: api.port,
    generation,
    removedGenerations: bridge.removedGenerations.join(","),
    fenced: recovery.fenced.length,
    adopted: kept.length,
    lock: lock.path,
  });
  spawner.start();
  moments.announceEnded(
    recovery.outcomes
      .filter(({ decision }) => decision.action === "ask" || decision.action === "interrupt")
      .map(({ turn }) => turn.id),
  );

  let stopped: Promise<void> | undefined;
  return {
    port: api.port,
    generation,
    stateDir,
    recovery,
    signInLink: () => `http://127.0.0.1:${api.port}/#login=${uiAuth.mintLoginCode().code}`,
    stop() {
      stopped ??= cleanup();
      return stopped;
    },
  };
}
