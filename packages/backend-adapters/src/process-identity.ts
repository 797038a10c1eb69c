import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * A process named by pid and start time: a pid alone may have been reused by an unrelated
 * process after a restart, so fencing acts only when both match.
 */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
}

export interface ProcessStatus {
  startTime: string;
  /** Exited but not yet reaped: it runs nothing, yet still holds its pid. */
  zombie: boolean;
}

export type ProcessStatusReader = (pid: number) => ProcessStatus | undefined;

/** Linux: field 22 of /proc/<pid>/stat (clock ticks since boot); elsewhere `ps -o lstart=,stat=`. */
export const readProcessStatus: ProcessStatusReader = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { startTime: fields[19] ?? "", zombie: fields[0] === "Z" };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && process.platform === "linux") return undefined;
  }
  try {
    const out = execFileSync("ps", ["-o", "stat=,lstart=", "-p", String(pid)], { encoding: "utf8" }).trim();
    if (out === "") return undefined;
    const [state = "", ...started] = out.split(/\s+/);
    return { startTime: started.join(" "), zombie: state.startsWith("Z") };
  } catch {
    return undefined;
  }
};

/** True while the process named by `identity` (not merely its pid) is running. */
export function isSameProcess(
  identity: ProcessIdentity,
  read: ProcessStatusReader = readProcessStatus,
): boolean {
  const status = read(identity.pid);
  return status !== undefined && !status.zombie && status.startTime === identity.startTime;
}

export function signalProcessGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

export interface FenceOptions {
  graceMs?: number;
  readProcessStatus?: ProcessStatusReader;
  sleep?: (ms: number) => Promise<void>;
}

export type FenceOutcome = "not-running" | "pid-reused" | "terminated" | "killed";

/**
 * Ends a CLI left over from an earlier daemon: TERM to its group, KILL after the grace.
 * A pid that now belongs to another process is left alone.
 */
export async function fenceProcess(
  identity: ProcessIdentity,
  options: FenceOptions = {},
): Promise<FenceOutcome> {
  const read = options.readProcessStatus ?? readProcessStatus;
  const sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  const current = read(identity.pid);
  if (current === undefined || current.zombie) return "not-running";
  if (current.startTime !== identity.startTime) return "pid-reused";
  signalProcessGroup(identity.pid, "SIGTERM");
  const deadline = options.graceMs ?? 2_000;
  for (let waited = 0; waited < deadline; waited += 50) {
    if (!isSameProcess(identity, read)) return "terminated";
    await sleep(50);
  }
  signalProcessGroup(identity.pid, "SIGKILL");
  for (let waited = 0; waited < 2_000; waited += 50) {
    if (!isSameProcess(identity, read)) return "killed";
    await sleep(50);
  }
  throw new Error(`process ${identity.pid} survived SIGKILL of its group`);
}
