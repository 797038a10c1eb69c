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
  processGroup: number;
  /** The session it belongs to (Linux only): a detached CLI leads its own, everything it started stays in it. */
  session?: number;
}

export type ProcessStatusReader = (pid: number) => ProcessStatus | undefined;

/** Linux: /proc/<pid>/stat, throwing as the read does (ENOENT once the process is gone). */
export function readProcStat(pid: number): ProcessStatus {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) is in parentheses and may itself hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 3 (state), 5 (process group), 6 (session) and 22 (start time, clock ticks since boot).
  return {
    startTime: fields[19] ?? "",
    zombie: fields[0] === "Z",
    processGroup: Number(fields[2]),
    session: Number(fields[3]),
  };
}

/** Linux: /proc/<pid>/stat; elsewhere `ps -o stat=,pgid=,lstart=`. */
export const readProcessStatus: ProcessStatusReader = (pid) => {
  try {
    return readProcStat(pid);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && process.platform === "linux") return undefined;
  }
  try {
    const out = execFileSync("ps", ["-o", "stat=,pgid=,lstart=", "-p", String(pid)], {
      encoding: "utf8",
    }).trim();
    if (out === "") return undefined;
    const [state = "", processGroup = "", ...started] = out.split(/\s+/);
    return {
      startTime: started.join(" "),
      zombie: state.startsWith("Z"),
      processGroup: Number(processGroup),
    };
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
  return sendSignal(-pgid, signal);
}

/** False when no such process (or, for a negative target, group) exists. */
function sendSignal(target: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(target, signal);
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
 * Ends a CLI left over from an earlier daemon, or a process found by its spawn marker: TERM to its
 * process group (to the process alone when that group is the caller's own), KILL after the grace.
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
  // A CLI leads its own group; a process found by its marker may be a member of another one.
  const group = current.processGroup;
  const signalGroup = group > 1 && group !== read(process.pid)?.processGroup;
  const signal = (name: NodeJS.Signals) =>
    signalGroup ? signalProcessGroup(group, name) : sendSignal(identity.pid, name);
  signal("SIGTERM");
  const deadline = options.graceMs ?? 2_000;
  for (let waited = 0; waited < deadline; waited += 50) {
    if (!isSameProcess(identity, read)) {
      // What the process started after the TERM reached its group would outlive it: end the group.
      if (signalGroup) signalProcessGroup(group, "SIGKILL");
      return "terminated";
    }
    await sleep(50);
  }
  signal("SIGKILL");
  for (let waited = 0; waited < 2_000; waited += 50) {
    if (!isSameProcess(identity, read)) return "killed";
    await sleep(50);
  }
  throw new Error(`process ${identity.pid} survived SIGKILL`);
}
