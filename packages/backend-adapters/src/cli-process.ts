import type { Readable } from "node:stream";
import type { CliExit, CliLaunch, CliProcessHooks, RunningCli } from "./cli-launch.js";
import { endSession } from "./cli-session.js";
import {
  type CliSpawner,
  CliSpawnFailure,
  type InProcessSpawnerDeps,
  inProcessSpawner,
  type SpawnedCli,
} from "./cli-spawner.js";
import { findExecutable } from "./executable.js";
import { type KeptCliDeps, startKeptCli } from "./kept-cli.js";
import { defaultMaxLineBytes, LineSplitter, LineTooLongError } from "./line-splitter.js";
import { type ProcessIdentity, signalProcessGroup } from "./process-identity.js";
import { assertNice } from "./process-priority.js";
import { withSpawnMarker } from "./spawn-marker.js";
import { TurnErrorCode } from "./turn-error-code.js";

export type { CliExit, CliLaunch, CliProcessHooks, LinePosition, RunningCli } from "./cli-launch.js";

export type CliStartErrorCode =
  | typeof TurnErrorCode.cliNotFound
  | typeof TurnErrorCode.cliNotExecutable
  | typeof TurnErrorCode.cliSpawnFailed;

/** The CLI could not be started; `code` says why, the message names the command and what to do. */
export class CliStartError extends Error {
  override readonly name = "CliStartError";
  constructor(
    readonly code: CliStartErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface CliProcessDeps extends InProcessSpawnerDeps {
  /**
   * What starts the process: default `inProcessSpawner(deps)`, Node's spawn in this process; a
   * long-running caller passes `startSpawnerProcess()`, which keeps the spawn off its event loop.
   */
  spawner?: CliSpawner;
  /** The longest stdout line read (default `defaultMaxLineBytes`, 8 MiB); a longer one ends the CLI. */
  maxLineBytes?: number;
  /** Run (or adopt) it through the CLI keeper instead, so it outlives this process (kept-cli.ts). */
  kept?: KeptCliDeps;
}

const stderrTailBytes = 4_096;

/**
 * Starts a CLI in its own process group and hands its stdout to `hooks.onLine` line by line. Rejects
 * with a `CliStartError` when the command cannot be found, run or started; the failed spawn's own
 * `error` event is handled, so it never reaches the caller's process as an uncaught error.
 */
export async function startCliProcess(
  launch: CliLaunch,
  hooks: CliProcessHooks,
  deps: CliProcessDeps = {},
): Promise<RunningCli> {
  if (deps.kept?.adopt === undefined) assertRunnable(launch);
  if (launch.nice !== undefined) assertNice(launch.nice);
  if (deps.kept !== undefined)
    return startKeptCli(launch, hooks, deps.kept, deps.maxLineBytes ?? defaultMaxLineBytes);
  const spawner = deps.spawner ?? inProcessSpawner(deps);
  let child: SpawnedCli;
  try {
    child = await spawner.spawn({
      command: launch.command,
      args: launch.args,
      cwd: launch.cwd,
      env: withSpawnMarker(launch.env, launch.spawnMarker),
      // Before its stdin is written: a CLI reads its prompt before it starts anything.
      ...(launch.nice !== undefined && { nice: launch.nice }),
    });
  } catch (error) {
    if (!(error instanceof CliSpawnFailure)) throw error;
    throw new CliStartError(
      TurnErrorCode.cliSpawnFailed,
      `${launch.command} could not be started in ${launch.cwd} (${error.message})${hintOf(launch)}`,
    );
  }
  const { pid } = child;
  if (child.startTime === undefined)
    throw new Error(`${launch.command} (pid ${pid}) vanished before its start time was read`);
  const identity: ProcessIdentity = { pid, startTime: child.startTime };
  try {
    hooks.onSpawned(identity);
  } catch (error) {
    // Nobody could fence a process whose identity was never recorded: end it now.
    signalProcessGroup(pid, "SIGKILL");
    child.stdin.destroy();
    child.stdout.destroy();
    child.stderr.destroy();
    throw error;
  }

  const splitter = new LineSplitter(
    deps.maxLineBytes === undefined ? {} : { maxLineBytes: deps.maxLineBytes },
  );
  let stderrTail = "";
  let lineTooLong: CliExit["lineTooLong"];
  child.stdout.on("data", (chunk: Buffer) => {
    if (lineTooLong !== undefined) return;
    let lines: readonly string[];
    try {
      lines = splitter.push(chunk);
    } catch (error) {
      if (!(error instanceof LineTooLongError)) throw error;
      lineTooLong = { limitBytes: error.limitBytes };
      lines = error.linesBefore;
      // Nothing more of this stream can be read as lines: end the CLI rather than buffer without bound.
      void stop();
    }
    for (const line of lines) hooks.onLine(line);
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-stderrTailBytes);
  });
  if (launch.stdin !== undefined) child.stdin.end(launch.stdin);
  else child.stdin.end();

  // As Node's `close`: the process has exited and both output pipes are closed.
  // What the CLI started is ended with it (cli-session.ts), before its exit is told.
  const ended = child.exit.then(async (status) => {
    await endSession(identity);
    return status;
  });
  const exited = Promise.all([ended, closed(child.stdout), closed(child.stderr)]).then(
    ([status]): CliExit => {
      if (lineTooLong === undefined) for (const line of splitter.end()) hooks.onLine(line);
      return {
        code: status.code,
        signal: status.signal,
        stderrTail: status.statusLost
          ? `the CLI spawner exited before this process; how it ended is unknown\n${stderrTail}`
          : stderrTail,
        ...(lineTooLong !== undefined && { lineTooLong }),
      };
    },
  );

  async function stop(graceMs = 2_000): Promise<CliExit> {
    signalProcessGroup(pid, "SIGTERM");
    const timer = setTimeout(() => signalProcessGroup(pid, "SIGKILL"), graceMs);
    const exit = await exited;
    clearTimeout(timer);
    // The leader may be gone while a child it started (an MCP shim) is still in the group.
    signalProcessGroup(pid, "SIGKILL");
    return exit;
  }

  return { identity, exited, stop };
}

function closed(stream: Readable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed) resolve();
    else stream.once("close", () => resolve());
  });
}

/** Refuses, before spawning, a command that is not there or may not be run, saying where it looked. */
function assertRunnable(launch: CliLaunch): void {
  const found = findExecutable(launch.command, launch.env.PATH, launch.cwd);
  if (found.found) return;
  if (found.reason === "not_executable") {
    throw new CliStartError(
      TurnErrorCode.cliNotExecutable,
      `${launch.command} cannot be run: ${found.path} is not an executable file${hintOf(launch)}`,
    );
  }
  const where = launch.command.includes("/")
    ? `${launch.command} does not exist`
    : `no executable named "${launch.command}" on PATH (${launch.env.PATH ?? "PATH is not set"})`;
  throw new CliStartError(
    TurnErrorCode.cliNotFound,
    `${launch.command} was not found: ${where}${hintOf(launch)}`,
  );
}

function hintOf(launch: CliLaunch): string {
  return launch.installHint === undefined ? "" : `. ${launch.installHint}`;
}
