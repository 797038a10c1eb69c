import { type ChildProcess, spawn as nodeSpawn, type SpawnOptions } from "node:child_process";
import type { SpawnMarker } from "@bridgeworks/protocol";
import { LineSplitter } from "./line-splitter.js";
import {
  type ProcessIdentity,
  type ProcessStatusReader,
  readProcessStatus,
  signalProcessGroup,
} from "./process-identity.js";
import { spawnMarkerVariable } from "./spawn-marker.js";

export interface CliLaunch {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Written to stdin, then closed. Without it stdin is closed at once. */
  stdin?: string;
  /**
   * Put into the environment as `FLOOT_SPAWN_MARKER` (over any value `env` has), so the process and
   * its children can be found by `findProcessesBySpawnMarker` even if its pid was never recorded.
   */
  spawnMarker?: SpawnMarker;
}

export interface CliExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last stderr the process wrote, for error messages. */
  stderrTail: string;
}

export interface CliProcessHooks {
  /**
   * Called with the new process's identity before any of its output is read, so a caller can
   * journal it first: after a crash the process can still be found and fenced.
   */
  onSpawned(identity: ProcessIdentity): void;
  onLine(line: string): void;
}

export interface RunningCli {
  identity: ProcessIdentity;
  exited: Promise<CliExit>;
  /** TERM to the process group, KILL after `graceMs` if anything is left. */
  stop(graceMs?: number): Promise<CliExit>;
}

export interface CliProcessDeps {
  spawn?: (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
  readProcessStatus?: ProcessStatusReader;
}

const stderrTailBytes = 4_096;

/** Starts a CLI in its own process group and hands its stdout to `hooks.onLine` line by line. */
export function startCliProcess(
  launch: CliLaunch,
  hooks: CliProcessHooks,
  deps: CliProcessDeps = {},
): RunningCli {
  const spawn = deps.spawn ?? nodeSpawn;
  const child = spawn(launch.command, launch.args, {
    cwd: launch.cwd,
    env:
      launch.spawnMarker === undefined
        ? launch.env
        : { ...launch.env, [spawnMarkerVariable]: launch.spawnMarker },
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const pid = child.pid;
  if (pid === undefined) {
    throw new Error(`could not start ${launch.command}`);
  }
  // Read before anything can reap the child; a process that already exited is still a zombie here.
  const status = (deps.readProcessStatus ?? readProcessStatus)(pid);
  if (status === undefined)
    throw new Error(`${launch.command} (pid ${pid}) vanished before its start time was read`);
  const identity: ProcessIdentity = { pid, startTime: status.startTime };
  try {
    hooks.onSpawned(identity);
  } catch (error) {
    // Nobody could fence a process whose identity was never recorded: end it now.
    signalProcessGroup(pid, "SIGKILL");
    throw error;
  }

  const splitter = new LineSplitter();
  let stderrTail = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    for (const line of splitter.push(chunk)) hooks.onLine(line);
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-stderrTailBytes);
  });
  if (launch.stdin !== undefined) child.stdin?.end(launch.stdin);
  else child.stdin?.end();
  child.stdin?.on("error", () => {});

  const exited = new Promise<CliExit>((resolve) => {
    let spawnError: Error | undefined;
    child.on("error", (error) => {
      spawnError = error;
    });
    child.on("close", (code, signal) => {
      for (const line of splitter.end()) hooks.onLine(line);
      resolve({ code, signal, stderrTail: spawnError ? `${spawnError.message}\n${stderrTail}` : stderrTail });
    });
  });

  return {
    identity,
    exited,
    async stop(graceMs = 2_000) {
      signalProcessGroup(pid, "SIGTERM");
      const timer = setTimeout(() => signalProcessGroup(pid, "SIGKILL"), graceMs);
      const exit = await exited;
      clearTimeout(timer);
      // The leader may be gone while a child it started (an MCP shim) is still in the group.
      signalProcessGroup(pid, "SIGKILL");
      return exit;
    },
  };
}
