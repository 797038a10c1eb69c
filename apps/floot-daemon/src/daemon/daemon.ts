import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type BackendAdapter,
  claudeInstallHint,
  codexInstallHint,
  createClaudeAdapter,
  createCodexAdapter,
  readProcessStatus,
} from "@bridgeworks/backend-adapters";
import {
  type BridgeGeneration,
  defaultGateHookScriptPath,
  defaultShimScriptPath,
  defaultToolGateDeadlineMs,
  mintToken,
  mintTurnMount,
  type ShimCommand,
  shimSocketEnvVar,
  shimTokenEnvVar,
  startBridgeGeneration,
  TurnTokenRegistry,
  writePrivateFileAtomic,
} from "@bridgeworks/control-channel";
import type { FlootDaemonFile, SessionRecord } from "@bridgeworks/protocol";
import { describeError, type Logger } from "@bridgeworks/runtime";
import { openJournal, type TurnJournal } from "@bridgeworks/turn-journal";
import { daemonFileName, journalFileName, lockFileName } from "../state-dir.js";
import { type ApiServer, startApiServer } from "./http/api-server.js";
import { createFlootMcpServer } from "./mcp-tools.js";
import { type RecoveryReport, recoverTurns } from "./recovery.js";
import { runtimeDirFor } from "./runtime-dir.js";
import { SecretBroker, type TurnContext } from "./secret-broker.js";
import { SecretVault } from "./secret-vault.js";
import { SessionStore } from "./session-store.js";
import { acquireStateLock, type StateLock } from "./state-lock.js";
import { createToolGate } from "./tool-gate.js";
import { diagnosticsTrace, type Trace } from "./trace.js";
import { TurnCoordinator } from "./turn-coordinator.js";
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
  /** Default: trace points on `node:diagnostics_channel` (see trace.ts). */
  trace?: Trace;
  /** The web UI's static files, when installed. */
  uiDir?: string;
}

export interface RunningDaemon {
  port: number;
  generation: number;
  stateDir: string;
  recovery: RecoveryReport;
  stop(): Promise<void>;
}

const defaultToolTimeoutMs = 60 * 60 * 1000;

/**
 * Starts a daemon on `stateDir`, in this order: take the state-dir lock (a second daemon fails here,
 * having touched nothing), open the journal, fence leftover CLIs and recover their turns, bump the
 * bridge generation, serve its MCP socket (older generations removed), serve the HTTP API, start the
 * turns that should run, and only then write `daemon.json`.
 */
export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const { stateDir, logger } = options;
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const self = readProcessStatus(process.pid);
  const lock = acquireStateLock(join(stateDir, lockFileName), {
    pid: process.pid,
    startTime: self?.startTime ?? "unknown",
  });
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
    return await startLocked(options, lock, cleanups, cleanup);
  } catch (error) {
    await cleanup();
    throw error;
  }
}

async function startLocked(
  options: DaemonOptions,
  lock: StateLock,
  cleanups: (() => Promise<void> | void)[],
  cleanup: () => Promise<void>,
): Promise<RunningDaemon> {
  const { stateDir, env, logger } = options;
  const journal: TurnJournal = openJournal({
    path: join(stateDir, journalFileName),
    // A follower sees a stream event within a timer tick of its arrival, not after a 50 ms batch;
    // such commits are not fsynced one by one (the next effect, phase or gate commit fsyncs them).
    batch: { maxDelayMs: 1 },
    streamSynchronous: "NORMAL",
    onError: (error) => logger.error("journal background error", { error: String(error) }),
  });
  cleanups.push(() => journal.close());

  const vault = new SecretVault(runtimeDirFor(stateDir, env), randomUUID);
  await vault.open();
  cleanups.push(() => vault.close());

  const trace = options.trace ?? diagnosticsTrace();
  const recovery = await recoverTurns(journal, logger, { trace });
  const generation = journal.bumpGeneration();

  const sessions = new SessionStore(stateDir);
  let coordinator: TurnCoordinator | undefined;
  const secrets = new SecretBroker(journal, vault, (turn) => coordinator?.kick(turn.sessionId));
  const tokens = new TurnTokenRegistry<TurnContext>(randomBytes);
  const gate = createToolGate({
    journal,
    effectFreeToolsOf: (turnId) => coordinator?.effectFreeToolsOf(turnId),
    trace,
    logger,
  });
  const bridge: BridgeGeneration<TurnContext> = await startBridgeGeneration<TurnContext>({
    bridgesDir: join(stateDir, "bridges"),
    generation,
    authorize: (token) => tokens.authorize(token),
    createServer: (context) => createFlootMcpServer(context, secrets, logger),
    handleRequest: gate,
    onEvent: (event) => {
      if (event.type === "refused" || event.type === "error")
        logger.warn(`mcp socket ${event.type}`, { ...event });
    },
  });
  cleanups.push(() => bridge.server.close());
  const shim: ShimCommand = {
    node: process.execPath,
    script: options.shimScript ?? besideBundle("shim.mjs"),
  };
  const gateHook = options.gateHookScript ?? besideBundle("gate-hook.mjs");
  const gateDeadlineMs = positiveInt(env.FLOOT_GATE_TIMEOUT_MS) ?? defaultToolGateDeadlineMs;

  coordinator = new TurnCoordinator({
    journal,
    sessions,
    secrets,
    logger,
    toolTimeoutMs: positiveInt(env.FLOOT_TOOL_TIMEOUT_MS) ?? defaultToolTimeoutMs,
    trace,
    adapterFor: (session) => adapterFor(session, sessions, env),
    mounts: {
      mount(context) {
        const token = tokens.issue(context);
        const mount = mintTurnMount({ socketPath: bridge.server.socketPath, token, shimCommand: shim });
        return {
          mount,
          // The same socket and token: the hook reads them from the CLI's environment.
          gate: {
            command: process.execPath,
            args: [gateHook],
            env: { [shimSocketEnvVar]: bridge.server.socketPath, [shimTokenEnvVar]: token },
            deadlineMs: gateDeadlineMs,
          },
          release() {
            tokens.revoke(token);
            bridge.server.closeConnectionsOf(context);
          },
        };
      },
    },
  });
  const running = coordinator;
  cleanups.push(() => running.shutdown());

  const startedAt = new Date().toISOString();
  const apiToken = mintToken(randomBytes);
  const api: ApiServer = await startApiServer(
    {
      journal,
      sessions,
      coordinator,
      secrets,
      token: apiToken,
      logger,
      status: () => ({ pid: process.pid, generation, stateDir, startedAt }),
      uiAuth: new UiAuth({ stateDir }),
      ...(options.uiDir !== undefined && { uiDir: options.uiDir }),
    },
    options.port ?? previousPort(join(stateDir, daemonFileName)) ?? 0,
    options.port === undefined,
  );
  cleanups.push(() => api.close());

  coordinator.resume(recovery.outcomes.map((outcome) => outcome.turn.sessionId));

  const daemonFile: FlootDaemonFile = { port: api.port, token: apiToken, pid: process.pid, generation };
  const daemonFilePath = join(stateDir, daemonFileName);
  await writePrivateFileAtomic(daemonFilePath, `${JSON.stringify(daemonFile)}\n`);
  cleanups.push(() => removeOwnDaemonFile(daemonFilePath));
  logger.info("daemon ready", {
    port: api.port,
    generation,
    removedGenerations: bridge.removedGenerations.join(","),
    fenced: recovery.fenced.length,
    lock: lock.path,
  });

  let stopped: Promise<void> | undefined;
  return {
    port: api.port,
    generation,
    stateDir,
    recovery,
    stop() {
      stopped ??= cleanup();
      return stopped;
    },
  };
}

function previousPort(path: string): number | undefined {
  try {
    const port = (JSON.parse(readFileSync(path, "utf8")) as { port?: unknown }).port;
    return typeof port === "number" && Number.isInteger(port) && port > 0 && port < 65_536 ? port : undefined;
  } catch {
    return undefined;
  }
}

function removeOwnDaemonFile(path: string): void {
  try {
    const current = JSON.parse(readFileSync(path, "utf8")) as { pid?: unknown };
    if (current.pid === process.pid) unlinkSync(path);
  } catch {
    // Gone or unreadable: nothing of ours to remove.
  }
}

function adapterFor(
  session: SessionRecord,
  sessions: SessionStore,
  env: Readonly<Record<string, string | undefined>>,
): BackendAdapter {
  const options = sessions.options(session.id);
  const common = {
    baseEnv: env,
    ...(options.env !== undefined && { env: options.env }),
    ...(options.model !== undefined && { model: options.model }),
  };
  if (session.backend === "claude") {
    return createClaudeAdapter({
      ...common,
      command: env.FLOOT_CLAUDE_COMMAND || "claude",
      installHint: `${claudeInstallHint}, or set FLOOT_CLAUDE_COMMAND to its path`,
      // Text deltas are journaled as they arrive, so a follower sees the turn stream, not jump.
      includePartialMessages: true,
      ...(options.allowedTools !== undefined && { allowedTools: options.allowedTools }),
      ...(options.permissionMode !== undefined && {
        extraArgs: ["--permission-mode", options.permissionMode],
      }),
    });
  }
  return createCodexAdapter({
    ...common,
    command: env.FLOOT_CODEX_COMMAND || "codex",
    installHint: `${codexInstallHint}, or set FLOOT_CODEX_COMMAND to its path`,
    ...(options.codexConfig !== undefined && { configOverrides: options.codexConfig }),
  });
}

/** A helper program bundled beside the daemon (`shim.mjs`, `gate-hook.mjs`), else control-channel's. */
function besideBundle(name: "shim.mjs" | "gate-hook.mjs"): string {
  const beside = join(dirname(fileURLToPath(import.meta.url)), name);
  if (existsSync(beside)) return beside;
  return name === "shim.mjs" ? defaultShimScriptPath() : defaultGateHookScriptPath();
}

function positiveInt(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  const value = Number(raw);
  return value > 0 ? value : undefined;
}
