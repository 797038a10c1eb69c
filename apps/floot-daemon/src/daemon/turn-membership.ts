import { readFileSync } from "node:fs";
import { spawnMarkerVariable } from "@bridgeworks/backend-adapters";

/** A running turn's CLI as the daemon started it: its pid and the marker its environment carries. */
export interface LiveTurnProcess {
  turnId: string;
  /** 0 while its CLI is being spawned. */
  pid: number;
  spawnMarker: string;
}

/** What /proc says of a process: its parent, process group, session and environment. */
export interface ProcessFacts {
  parent: number;
  processGroup: number;
  session: number;
  environment: readonly string[];
}

export type ReadProcessFacts = (pid: number) => ProcessFacts | undefined;

/**
 * Which running turn a process belongs to, if any: a descendant of the turn's CLI, a member of its
 * process group or session (each CLI leads its own), or a carrier of its spawn marker (inherited by
 * everything the CLI starts unless a process clears its environment). A process that left all four
 * (double fork, `setsid`, `env -i`) is not recognized: the sandbox, not this check, is what keeps a
 * turn's commands from the daemon; this stands behind it for a session that runs unconfined.
 */
export function turnOfProcess(
  pid: number,
  live: readonly LiveTurnProcess[],
  read: ReadProcessFacts = readLinuxProcessFacts,
): string | undefined {
  if (live.length === 0) return undefined;
  const byPid = new Map(live.filter((each) => each.pid > 0).map((each) => [each.pid, each.turnId]));
  const byMarker = new Map(live.map((each) => [`${spawnMarkerVariable}=${each.spawnMarker}`, each.turnId]));
  const first = read(pid);
  if (first === undefined) return undefined;
  for (const entry of first.environment) {
    const turn = byMarker.get(entry);
    if (turn !== undefined) return turn;
  }
  const leader = byPid.get(first.session) ?? byPid.get(first.processGroup);
  if (leader !== undefined) return leader;
  let facts: ProcessFacts | undefined = first;
  for (let current = pid, steps = 0; facts !== undefined && steps < 128; steps++) {
    const turn = byPid.get(current);
    if (turn !== undefined) return turn;
    if (facts.parent <= 1) return undefined;
    current = facts.parent;
    facts = read(current);
  }
  return undefined;
}

export function readLinuxProcessFacts(pid: number): ProcessFacts | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    let environment: string[] = [];
    try {
      environment = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    } catch {
      // Another user's process, or gone: its ancestry still counts.
    }
    return {
      parent: Number(fields[1]),
      processGroup: Number(fields[2]),
      session: Number(fields[3]),
      environment,
    };
  } catch {
    return undefined;
  }
}
