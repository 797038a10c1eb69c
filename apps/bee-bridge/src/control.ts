import {
  beeRunDirRule,
  type ControlServer,
  ensureRunDir,
  mintToken,
  type RandomBytes,
  removeRunFileSync,
  resolveRunDir,
  runFilePath as runFilePathIn,
  type SettledRetireOutcome,
  type StartTimeReader,
  startControlServer,
  sweepStaleRunFiles,
  systemStartTimeReader,
  writeRunFile,
} from "@bridgeworks/control-channel";
import { describeError, type Logger } from "@bridgeworks/runtime";
import type { BridgeIdentity } from "./identity.js";

export interface ControlChannelOptions {
  env: Readonly<Record<string, string | undefined>>;
  homeDir: string;
  claudePid: number;
  bridgePid: number;
  identity: BridgeIdentity;
  log: Logger;
  randomBytes: RandomBytes;
  /** Created before the channel opens, so a signal that lands while the file is being written still removes it. */
  release: RunFileRelease;
  /** How the bridge reads its own start time for the run file; default `/proc`, else `ps`. */
  readStartTime?: StartTimeReader;
}

export interface ControlChannel {
  runFilePath: string;
  close(): Promise<void>;
}

/** Removes the run file synchronously; safe to call any number of times, from a signal handler too. */
export class RunFileRelease {
  #path: string | undefined;
  #released = false;

  get released(): boolean {
    return this.#released;
  }

  announce(path: string): void {
    this.#path = path;
  }

  releaseSync(): void {
    this.#released = true;
    if (this.#path !== undefined) removeRunFileSync(this.#path);
  }
}

/**
 * The /clear fallback: sweeps run files of dead sessions, serves `POST /retire` on loopback and
 * writes `<runDir>/<claudePid>.json` (port, token, this process's pid and start time) so
 * `bee hook session-start` can find this bridge and tell it from whatever else may hold its pid or port.
 */
export async function openControlChannel(options: ControlChannelOptions): Promise<ControlChannel> {
  const runDir = resolveRunDir(beeRunDirRule, { env: options.env, homeDir: options.homeDir });
  await ensureRunDir(runDir);
  const swept = await sweepStaleRunFiles(runDir);
  if (swept.length > 0) options.log.info("swept stale run files", { count: swept.length });

  // Recorded so that a hook can tell this bridge from a later process that got its pid.
  const startTime = (options.readStartTime ?? systemStartTimeReader)(options.bridgePid);
  if (startTime === undefined)
    throw new Error(`cannot read the start time of the bridge (pid ${options.bridgePid})`);
  const bridgeProcess = { pid: options.bridgePid, startTime };
  const token = mintToken(options.randomBytes);
  const server: ControlServer = await startControlServer({
    token,
    process: bridgeProcess,
    randomBytes: options.randomBytes,
    retire: () => retireForControl(options.identity, options.log),
  });
  const runFilePath = runFilePathIn(runDir, options.claudePid);
  options.release.announce(runFilePath);
  try {
    if (options.release.released) throw new Error("the bridge is shutting down");
    await writeRunFile(runDir, options.claudePid, { port: server.port, token, ...bridgeProcess });
    // The bridge began stopping while the file was written: it must not outlive the bridge.
    if (options.release.released) removeRunFileSync(runFilePath);
  } catch (error) {
    await server.close();
    throw error;
  }
  options.log.info("control channel listening", { port: server.port, claudePid: options.claudePid });
  return {
    runFilePath,
    close: () => server.close(),
  };
}

async function retireForControl(identity: BridgeIdentity, log: Logger): Promise<SettledRetireOutcome> {
  try {
    const report = await identity.clear({ via: "control" });
    return { status: "done", retired: report.retired, current: report.current };
  } catch (error) {
    log.error("retire through /retire failed", { error: describeError(error) });
    return { status: "failed", error: describeError(error) };
  }
}
