import { type ChildProcess, spawn as nodeSpawn, type SpawnOptions } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { type ProcessStatusReader, readProcessStatus } from "./process-identity.js";
import { lowerProcessPriority } from "./process-priority.js";

export interface CliSpawnSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  nice?: number;
}

export interface CliExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The spawner that started it died first: how it ended is unknown (its pipes still tell when). */
  statusLost?: true;
}

/** A started CLI in its own session and process group; nothing of its output has been read yet. */
export interface SpawnedCli {
  pid: number;
  /** Undefined when the process was gone before its start time could be read. */
  startTime: string | undefined;
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** Settles when the process has exited (its pipes may stay open in what it started). */
  exit: Promise<CliExitStatus>;
}

/** The spawn itself failed (a missing working directory, EACCES, …); `message` is the system's. */
export class CliSpawnFailure extends Error {
  override readonly name = "CliSpawnFailure";
}

/** Starts CLIs. `inProcessSpawner` forks the caller; `startSpawnerProcess` a small helper process. */
export interface CliSpawner {
  spawn(spec: CliSpawnSpec): Promise<SpawnedCli>;
}

export interface InProcessSpawnerDeps {
  spawn?: (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
  readProcessStatus?: ProcessStatusReader;
}

/**
 * Spawns in the calling process: simple, but Node's spawn blocks the caller's event loop for the fork
 * of its whole address space and until the child has exec'd (10-90 ms each on a loaded 2-core VM).
 */
export function inProcessSpawner(deps: InProcessSpawnerDeps = {}): CliSpawner {
  return { spawn: (spec) => startChild(spec, deps) };
}

/**
 * The spawn both spawners share: `detached` (its own session and process group), three pipes, the nice
 * applied and the start time read before the caller sees it (a process that already exited is still a
 * zombie then). `onStarted` runs synchronously right after the spawn, before any I/O. Rejects with
 * `CliSpawnFailure`, naming the spawn's own error, when nothing was started.
 */
export async function startChild(
  spec: CliSpawnSpec,
  deps: InProcessSpawnerDeps = {},
  onStarted?: (child: ChildProcess) => void,
): Promise<SpawnedCli> {
  const child = (deps.spawn ?? nodeSpawn)(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  // Heard before anything can throw: an unheard `error` event (spawn ENOENT, EACCES) would end the
  // whole process. A failed spawn emits it on the next tick.
  const spawnError = new Promise<Error>((resolve) => child.once("error", resolve));
  child.on("error", () => {});
  child.stdin?.on("error", () => {});
  const { pid, stdin, stdout, stderr } = child;
  if (pid === undefined || !stdin || !stdout || !stderr)
    throw new CliSpawnFailure((await spawnError).message);
  onStarted?.(child);
  if (spec.nice !== undefined) lowerProcessPriority(pid, spec.nice);
  const status = (deps.readProcessStatus ?? readProcessStatus)(pid);
  const exit = new Promise<CliExitStatus>((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  return { pid, startTime: status?.startTime, stdin, stdout, stderr, exit };
}
