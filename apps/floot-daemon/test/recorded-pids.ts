import { existsSync, readFileSync } from "node:fs";

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

/**
 * Ends what a failed test's commands left running: each pid recorded in `file` (one a line) that is
 * still one of them, a command naming `dir` (its group with it) or its `sleep 600`. A pid that is gone,
 * or that now belongs to another program, is left alone.
 */
export function killRecorded(file: string, dir: string): void {
  if (!existsSync(file)) return;
  for (const pid of readFileSync(file, "utf8").split("\n").map(Number)) {
    if (!Number.isSafeInteger(pid) || pid <= 1) continue;
    const line = commandLine(pid);
    const targets = line.includes(dir) ? [-pid, pid] : line === "sleep 600" ? [pid] : [];
    for (const target of targets) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
  }
}
