import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import type { ControlProcess } from "@bridgeworks/protocol";

/** What the claude-pid rule needs to know about one process. */
export interface ProcessInfo {
  ppid: number;
  /** The command name as `ps -o comm=` shows it, without the trailing newline. May hold spaces. */
  comm: string;
}

/** Returns undefined when there is no such process (or it vanished while being read). */
export type ProcessReader = (pid: number) => ProcessInfo | undefined;

export type ExecFile = (file: string, args: readonly string[]) => string;

const execFileUtf8: ExecFile = (file, args) =>
  execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });

/**
 * Reads a process through `ps`. ppid and comm are asked for separately: comm is the last and only
 * column, so the output is exactly the name plus a newline, whatever spaces the name holds.
 */
export function readProcessWithPs(pid: number, execFile: ExecFile = execFileUtf8): ProcessInfo | undefined {
  assertPid(pid);
  try {
    const ppidText = execFile("ps", ["-o", "ppid=", "-p", String(pid)]).trim();
    const comm = stripTrailingNewline(execFile("ps", ["-o", "comm=", "-p", String(pid)]));
    if (!/^[0-9]+$/.test(ppidText)) return undefined;
    return { ppid: Number(ppidText), comm };
  } catch {
    // ps exits non-zero when the pid does not exist.
    return undefined;
  }
}

export type ReadTextFile = (path: string) => string;

/**
 * Reads a process from `/proc/<pid>/stat` (Linux), the same source `ps -o comm=` uses there. The comm
 * sits in parentheses and may itself hold spaces and parentheses, so it runs to the LAST `)`.
 */
export function readProcessFromProcfs(
  pid: number,
  readTextFile: ReadTextFile = (path) => readFileSync(path, "utf8"),
): ProcessInfo | undefined {
  const stat = readProcStat(pid, readTextFile);
  return stat === undefined ? undefined : parseProcStat(stat);
}

/** `/proc/<pid>/stat`, or undefined when it cannot be read (no such process). */
function readProcStat(pid: number, readTextFile: ReadTextFile): string | undefined {
  assertPid(pid);
  try {
    return readTextFile(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
}

/** Parses `<pid> (<comm>) <state> <ppid> ...`. */
export function parseProcStat(stat: string): ProcessInfo | undefined {
  const split = splitProcStat(stat);
  const ppidText = split?.fields[1];
  if (split === undefined || ppidText === undefined || !/^[0-9]+$/.test(ppidText)) return undefined;
  return { ppid: Number(ppidText), comm: split.comm };
}

/** The comm, and the fields after it from field 3 (state) on. */
function splitProcStat(stat: string): { comm: string; fields: string[] } | undefined {
  const open = stat.indexOf("(");
  const close = stat.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  return {
    comm: stat.slice(open + 1, close),
    fields: stat
      .slice(close + 1)
      .trim()
      .split(" "),
  };
}

/**
 * When a live process started, or undefined when there is none under that pid (never was, exited, or
 * a zombie, which holds its pid but nothing else). Compare it only with another reading.
 */
export type StartTimeReader = (pid: number) => string | undefined;

/** Linux: field 22 of `/proc/<pid>/stat`, clock ticks since boot. */
export function readStartTimeFromProcfs(
  pid: number,
  readTextFile: ReadTextFile = (path) => readFileSync(path, "utf8"),
): string | undefined {
  const stat = readProcStat(pid, readTextFile);
  const fields = stat === undefined ? undefined : splitProcStat(stat)?.fields;
  // fields[0] is field 3 (state), so field 22 is fields[19].
  const startTime = fields?.[19];
  if (fields?.[0] === "Z" || startTime === undefined || !/^[0-9]+$/.test(startTime)) return undefined;
  return startTime;
}

/** Elsewhere: `ps -o stat=,lstart=`, the state first and the start date (to the second) after it. */
export function readStartTimeWithPs(pid: number, execFile: ExecFile = execFileUtf8): string | undefined {
  assertPid(pid);
  let line: string;
  try {
    line = execFile("ps", ["-o", "stat=,lstart=", "-p", String(pid)]).trim();
  } catch {
    return undefined;
  }
  const [state = "", ...started] = line.split(/\s+/);
  if (state.startsWith("Z") || started.length === 0) return undefined;
  return started.join(" ");
}

export function systemStartTimeReader(pid: number): string | undefined {
  return procfsAvailable() ? readStartTimeFromProcfs(pid) : readStartTimeWithPs(pid);
}

/**
 * Whether the process a run file names still runs: `gone` (no live process has the pid), `replaced`
 * (the pid belongs to a process that started at another time: the pid was reused), else `running`.
 */
export function checkControlProcess(
  process: ControlProcess,
  readStartTime: StartTimeReader = systemStartTimeReader,
): "running" | "gone" | "replaced" {
  const startTime = readStartTime(process.pid);
  if (startTime === undefined) return "gone";
  return startTime === process.startTime ? "running" : "replaced";
}

/** `/proc` where the system has it (no process spawned per ancestor), `ps` elsewhere (macOS). */
export function systemProcessReader(pid: number): ProcessInfo | undefined {
  return procfsAvailable() ? readProcessFromProcfs(pid) : readProcessWithPs(pid);
}

function procfsAvailable(): boolean {
  return existsSync("/proc/self/stat");
}

function stripTrailingNewline(text: string): string {
  return text.endsWith("\n") ? text.slice(0, -1) : text;
}

function assertPid(pid: number): void {
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    throw new RangeError(`pid must be a positive integer, got ${pid}`);
  }
}
