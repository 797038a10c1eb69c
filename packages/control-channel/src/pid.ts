import { hasErrnoCode } from "./errno.js";

export type SignalSender = (pid: number, signal: 0) => void;

/**
 * Whether a process with this pid exists: signal 0 checks without sending anything. EPERM means it
 * exists but belongs to someone else, so it counts as alive.
 */
export function isPidAlive(
  pid: number,
  sendSignal: SignalSender = (target, signal) => process.kill(target, signal),
): boolean {
  // 0 and negative pids address process groups, which would make any answer meaningless.
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    throw new RangeError(`pid must be a positive integer, got ${pid}`);
  }
  try {
    sendSignal(pid, 0);
    return true;
  } catch (error) {
    if (hasErrnoCode(error, "ESRCH")) return false;
    if (hasErrnoCode(error, "EPERM")) return true;
    throw error;
  }
}
