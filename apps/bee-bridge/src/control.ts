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
  startControlServer,
  sweepStaleRunFiles,
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
 * writes `<runDir>/<claudePid>.json` so `bee hook session-start` can find this bridge.
 */
export async function openControlChannel(options: ControlChannelOptions): Promise<ControlChannel> {
  const runDir = resolveRunDir(beeRunDirRule, { env: options.env, homeDir: options.homeDir });
  await ensureRunDir(runDir);
  const swept = await sweepStaleRunFiles(runDir);
  if (swept.length > 0) options.log.info("swept stale run files", { count: swept.length });

  const token = mintToken(options.randomBytes);
  const server: ControlServer = await startControlServer({
    token,
    retire: () => retireForControl(options.identity, options.log),
  });
  const runFilePath = runFilePathIn(runDir, options.claudePid);
  options.release.announce(runFilePath);
  try {
    if (options.release.released) throw new Error("the bridge is shutting down");
    await writeRunFile(runDir, options.claudePid, { port: server.port, token, pid: options.bridgePid });
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
