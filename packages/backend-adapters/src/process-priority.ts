import { writeFileSync } from "node:fs";
import { setPriority } from "node:os";
import { maxCliNice, minCliNice } from "@bridgeworks/protocol";

/**
 * Gives a process started in its own session a nice value both ways Linux weighs it. A new session is
 * its own scheduling autogroup, and the kernel shares the CPU between autogroups first: the process's
 * own nice (inherited by what it starts) ranks it only within its group, while the group's nice
 * (`/proc/<pid>/autogroup`) ranks the group against the caller's. Without the second, ten CLIs starting
 * at once take ten shares of two cores against their daemon's one.
 *
 * Best effort, like `nice(1)`: a kernel without autogroups has no such file, and a process that already
 * exited has nothing left to rank, so neither failure is an error.
 */
export function lowerProcessPriority(pid: number, nice: number): void {
  assertNice(nice);
  if (nice === 0) return;
  try {
    setPriority(pid, nice);
  } catch {
    // ESRCH: it exited already.
  }
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // ENOENT: no autogroups here (not Linux, or a kernel built without them), or it exited.
  }
}

export function assertNice(nice: number): void {
  if (!Number.isInteger(nice) || nice < minCliNice || nice > maxCliNice)
    throw new RangeError(`nice must be an integer from ${minCliNice} to ${maxCliNice}, got ${nice}`);
}
