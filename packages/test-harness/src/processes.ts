import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * Whether `pid` runs: in the process table and not a zombie (a killed process whose parent is gone, or
 * does not wait, stays a zombie until something reaps it). Reads `/proc/<pid>/stat` (Linux); a process
 * reaped meanwhile is not alive.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The state letter follows the command name, which may itself hold ") ".
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return false;
  }
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface TrackedProcess {
  pid: number;
  child: ChildProcess;
  /** Everything written so far; stdout and stderr are captured unless the caller inherits or ignores them. */
  stdout(): string;
  stderr(): string;
  exited: Promise<ExitStatus>;
  /** Resolves when `predicate` holds for the stdout seen so far; rejects on exit or after `timeoutMs`. */
  waitForOutput(predicate: (stdout: string) => boolean, timeoutMs: number): Promise<string>;
}

/**
 * Starts processes in their own process groups and ends every one of them, with its
 * descendants, by pid: a test never leaves an agent or an MCP server behind.
 */
export class ProcessTracker {
  readonly #running = new Set<TrackedProcess>();
  // Process groups outlive their leader when a child (an MCP server, say) is still in them.
  readonly #groups = new Set<number>();

  spawn(command: string, args: readonly string[], options: SpawnOptions): TrackedProcess {
    const child = spawn(command, args, { ...options, detached: true });
    if (child.pid === undefined) {
      throw new Error(`could not start ${command}: ${String(child.spawnfile)}`);
    }
    let out = "";
    let err = "";
    const outputWaiters = new Set<() => void>();
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      for (const notify of outputWaiters) notify();
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      err += chunk;
    });
    const exited = new Promise<ExitStatus>((resolve) => {
      child.on("exit", (code, signal) => resolve({ code, signal }));
      child.on("error", () => resolve({ code: null, signal: null }));
    });
    const tracked: TrackedProcess = {
      pid: child.pid,
      child,
      stdout: () => out,
      stderr: () => err,
      exited,
      waitForOutput: (predicate, timeoutMs) =>
        new Promise((resolve, reject) => {
          const check = () => {
            if (!predicate(out)) return;
            finish();
            resolve(out);
          };
          const timer = setTimeout(() => {
            finish();
            reject(
              new Error(
                `${command}: expected output not seen within ${timeoutMs} ms\nstdout:\n${out}\nstderr:\n${err}`,
              ),
            );
          }, timeoutMs);
          const finish = () => {
            clearTimeout(timer);
            outputWaiters.delete(check);
          };
          outputWaiters.add(check);
          exited.then(() => {
            if (!outputWaiters.has(check)) return;
            finish();
            reject(
              new Error(`${command} exited before the expected output\nstdout:\n${out}\nstderr:\n${err}`),
            );
          });
          check();
        }),
    };
    this.#running.add(tracked);
    this.#groups.add(child.pid);
    exited.then(() => this.#running.delete(tracked));
    return tracked;
  }

  /** Pids of processes started here that have not exited yet. */
  livePids(): number[] {
    return [...this.#running].map((tracked) => tracked.pid);
  }

  /** SIGTERM to each process group, SIGKILL to whatever is left after `graceMs`. */
  async endAll(graceMs = 2_000): Promise<void> {
    const running = [...this.#running];
    const groups = [...this.#groups];
    this.#groups.clear();
    for (const pgid of groups) signalGroup(pgid, "SIGTERM");
    await Promise.race([Promise.all(running.map((tracked) => tracked.exited)), delay(graceMs)]);
    for (const pgid of groups) signalGroup(pgid, "SIGKILL");
    await Promise.all(running.map((tracked) => tracked.exited));
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
