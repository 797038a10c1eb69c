import { readdirSync } from "node:fs";
import {
  type FenceOptions,
  type FenceOutcome,
  fenceProcess,
  type ProcessIdentity,
  type ProcessStatus,
  readProcStat,
} from "./process-identity.js";

/** The process table a session is read from (a seam for tests). */
export interface ProcessTable {
  /** Every pid to look at. */
  pids(): Iterable<number>;
  /** A process's status, throwing once it is gone. */
  stat(pid: number): ProcessStatus;
}

export const linuxProcessTable: ProcessTable = {
  *pids() {
    let entries: string[];
    try {
      entries = readdirSync("/proc");
    } catch {
      return;
    }
    for (const entry of entries) if (/^\d+$/.test(entry)) yield Number(entry);
  },
  stat: readProcStat,
};

/**
 * The live processes (zombies aside) in the session `leader` leads, the leader too while it runs. A pid
 * still naming a session is never handed to a new process, so while members are left the leader's pid
 * is not reused; when it was (the leader's pid runs another process), that process's session is not
 * the CLI's and nothing is returned.
 */
export function sessionMembers(leader: ProcessIdentity, table: ProcessTable = linuxProcessTable): number[] {
  const current = statOrGone(table, leader.pid);
  if (current !== undefined && !current.zombie && current.startTime !== leader.startTime) return [];
  const startedAt = Number(leader.startTime);
  const members: number[] = [];
  for (const pid of table.pids()) {
    const status = statOrGone(table, pid);
    if (status === undefined || status.zombie || status.session !== leader.pid) continue;
    // Started before the leader: not something it started (a guard; session ids are not reused while held).
    if (Number.isFinite(startedAt) && Number(status.startTime) < startedAt) continue;
    members.push(pid);
  }
  return members;
}

export interface EndSessionOptions {
  graceMs?: number;
  table?: ProcessTable;
  sleep?: (ms: number) => Promise<void>;
  signal?: (pid: number, signal: NodeJS.Signals) => void;
}

/**
 * What a turn's CLI leaves behind is ended with it: a detached CLI leads its own session, and a tool's
 * helper may start its own process group inside it (codex 0.171's sandbox fs-helper,
 * `codex-linux-sandbox --codex-run-as-fs-helper`, does, and outlives codex), so the session, not the
 * group, is what holds everything the CLI started. A process meant to outlive its turn leaves the
 * session (`setsid`). Linux only (/proc); elsewhere nothing is found.
 *
 * TERM to every member of the leader's session, KILL to those left after the grace. Returns who was found.
 */
export async function endSession(
  leader: ProcessIdentity,
  options: EndSessionOptions = {},
): Promise<number[]> {
  const table = options.table ?? linuxProcessTable;
  const sleep = options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const signal = options.signal ?? signalIfThere;
  const found = sessionMembers(leader, table);
  if (found.length === 0) return found;
  for (const pid of found) signal(pid, "SIGTERM");
  const grace = options.graceMs ?? 1_000;
  let left = found;
  for (let waited = 0; left.length > 0 && waited < grace; waited += 50) {
    await sleep(50);
    left = sessionMembers(leader, table);
  }
  for (const pid of left) signal(pid, "SIGKILL");
  for (let waited = 0; left.length > 0 && waited < 2_000; waited += 50) {
    await sleep(50);
    left = sessionMembers(leader, table);
  }
  return found;
}

function statOrGone(table: ProcessTable, pid: number): ProcessStatus | undefined {
  try {
    return table.stat(pid);
  } catch {
    return undefined;
  }
}

function signalIfThere(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone meanwhile.
  }
}

/** Fences a CLI left over from an earlier daemon, then ends whatever it left in its session. */
export async function fenceCli(
  identity: ProcessIdentity,
  options: FenceOptions & { table?: ProcessTable } = {},
): Promise<FenceOutcome> {
  const outcome = await fenceProcess(identity, options);
  if (outcome !== "pid-reused") await endSession(identity, options.table ? { table: options.table } : {});
  return outcome;
}
