import { randomBytes } from "node:crypto";
import { homedir, hostname } from "node:os";
import { resolveBoardLocation } from "@bridgeworks/board";
import { UsageError } from "@bridgeworks/cli";
import { findClaudePid, isPidAlive, systemProcessReader } from "@bridgeworks/control-channel";
import { LogLevel } from "@bridgeworks/protocol";
import { createLogger, describeError, streamSink } from "@bridgeworks/runtime";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { resolveAgentName } from "./agent-name.js";
import { BoardAccess } from "./board-access.js";
import { pushActionsToChannel } from "./channel.js";
import { type ControlChannel, openControlChannel, RunFileRelease } from "./control.js";
import { BridgeIdentity } from "./identity.js";
import { keepLease } from "./lease.js";
import { createLifecycle } from "./lifecycle.js";
import { createBridgeServer } from "./mcp-server.js";
import { BridgeTools } from "./tools.js";

export interface BridgeSettings {
  /** An absolute SQLite path or a `postgres://` URL, which may carry a password: log it redacted only. */
  boardLocation: string;
  logLevel: LogLevel;
  progressIntervalMs: number;
  busyTimeoutMs: number;
  channel: boolean;
}

/** Reads the bridge's settings from its environment; a bad value names its variable. */
export function readBridgeSettings(
  env: Readonly<Record<string, string | undefined>>,
  home: string,
): BridgeSettings {
  return {
    boardLocation: resolveBoardLocation(env, home),
    logLevel: readLogLevel(env),
    progressIntervalMs: readInteger(env, "BEE_PROGRESS_INTERVAL_MS", 2000, 100, 60_000),
    busyTimeoutMs: readInteger(env, "BEE_BUSY_TIMEOUT_MS", 100, 0, 10_000),
    channel: readFlag(env, "BEE_CHANNEL"),
  };
}

/** `bee bridge`: the MCP stdio server of one Claude Code session. Resolves once stdio is connected. */
export async function runBridge(version: string): Promise<void> {
  const env = process.env;
  const home = homedir();
  const settings = readBridgeSettings(env, home);
  // Claude Code keeps an MCP server's stderr out of sight: BEE_LOG_FILE gets every line too.
  const log = createLogger({
    component: "bee-bridge",
    level: settings.logLevel,
    write: streamSink(process.stderr, env.BEE_LOG_FILE || undefined),
  });
  const name = resolveAgentName(env, process.cwd());

  const access = new BoardAccess({
    location: settings.boardLocation,
    busyTimeoutMs: settings.busyTimeoutMs,
  });
  const identity = new BridgeIdentity({
    access,
    name,
    log,
    process: { host: hostname(), pid: process.pid },
  });
  const lease = keepLease({ access, identity, log });
  const tools = new BridgeTools({
    access,
    identity,
    log,
    progressIntervalMs: settings.progressIntervalMs,
    busyRetryMs: 3000,
    sessionEventAnswerWithinMs: 5000,
  });
  const server = createBridgeServer({ tools, version, channel: settings.channel, log });
  const stopping = new AbortController();

  let control: ControlChannel | undefined;
  const runFileRelease = new RunFileRelease();
  const initialPpid = process.ppid;
  let claudePid: number | undefined;
  try {
    claudePid = findClaudePid({ env, startPid: initialPpid, readProcess: systemProcessReader });
  } catch (error) {
    log.warn("claude pid unknown", { error: describeError(error) });
  }

  const lifecycle = createLifecycle({
    log,
    releaseSync: () => runFileRelease.releaseSync(),
    closeAsync: async () => {
      lease.stop();
      stopping.abort(new Error("the bridge is shutting down"));
      await Promise.allSettled([control?.close(), identity.depart()]);
      await access.close();
    },
    exit: (code) => process.exit(code),
    graceMs: 60,
    parent: { initialPpid, currentPpid: () => process.ppid, claudePid },
    isPidAlive,
    parentPollMs: 1000,
  });
  lifecycle.start(process);

  await server.connect(new StdioServerTransport());
  log.info("bridge started", {
    name,
    pid: process.pid,
    claudePid: claudePid ?? null,
    board: access.location,
  });

  // Registration and the control channel are not needed to answer initialize: do them after connecting.
  await identity.current().catch((error: unknown) => {
    log.warn("board unavailable at start; will retry on the next call", { error: describeError(error) });
  });
  if (claudePid === undefined) {
    log.warn(
      "no claude ancestor found: serving without a run file, so /clear can only reach this bridge through the mcp_tool hook",
    );
  } else {
    try {
      control = await openControlChannel({
        env,
        homeDir: home,
        claudePid,
        bridgePid: process.pid,
        identity,
        log,
        randomBytes,
        release: runFileRelease,
      });
    } catch (error) {
      log.error("control channel unavailable", { error: describeError(error) });
    }
  }
  if (settings.channel) {
    void pushActionsToChannel({
      access,
      identity,
      log,
      signal: stopping.signal,
      send: (notification) => server.notification(notification),
    });
  }
}

function readInteger(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!/^[0-9]+$/.test(raw) || value < min || value > max) {
    throw new UsageError(name, `must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function readLogLevel(env: Readonly<Record<string, string | undefined>>): LogLevel {
  const raw = env.BEE_LOG_LEVEL;
  if (raw === undefined || raw === "") return "info";
  const parsed = LogLevel.safeParse(raw);
  if (!parsed.success) {
    throw new UsageError(
      "BEE_LOG_LEVEL",
      `must be one of ${LogLevel.options.join(", ")}, got ${JSON.stringify(raw)}`,
    );
  }
  return parsed.data;
}

function readFlag(env: Readonly<Record<string, string | undefined>>, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "" || raw === "0") return false;
  if (raw === "1") return true;
  throw new UsageError(name, `must be 1 or 0, got ${JSON.stringify(raw)}`);
}
