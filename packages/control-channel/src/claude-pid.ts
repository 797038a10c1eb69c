import type { ProcessReader } from "./process-reader.js";

/** What `ps -o comm=` shows for Claude Code: its `claude` launcher, or `claude.exe` when run directly. */
export const claudeCommNames: readonly string[] = ["claude", "claude.exe"];

export function isClaudeComm(comm: string): boolean {
  const name = comm.endsWith("\n") ? comm.slice(0, -1) : comm;
  return claudeCommNames.includes(name);
}

export class InvalidClaudePidError extends Error {
  override readonly name = "InvalidClaudePidError";
}

export interface FindClaudePidInput {
  env: Readonly<Record<string, string | undefined>>;
  /**
   * The first process to look at. A stdio MCP server passes `process.ppid` (Claude spawns it directly);
   * a command hook passes `process.ppid` too (`claude -> sh -> hook`), and usually has `CLAUDE_PID`.
   */
  startPid: number;
  readProcess: ProcessReader;
  /** Guards against a cycle or a runaway table; real process trees are far shallower. */
  maxDepth?: number;
}

/**
 * The claude pid of the session this process belongs to: `CLAUDE_PID` when set (Claude Code sets it for
 * hooks, not for MCP servers), else the nearest process from `startPid` upwards whose comm is exactly
 * `claude` or `claude.exe`. Undefined when there is none. The bridge and its hook share this one rule.
 */
export function findClaudePid({
  env,
  startPid,
  readProcess,
  maxDepth = 64,
}: FindClaudePidInput): number | undefined {
  const fromEnv = env.CLAUDE_PID;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!/^[1-9][0-9]*$/.test(fromEnv) || !Number.isSafeInteger(Number(fromEnv))) {
      throw new InvalidClaudePidError(
        `CLAUDE_PID must be a positive integer, got ${JSON.stringify(fromEnv)}`,
      );
    }
    return Number(fromEnv);
  }

  const visited = new Set<number>();
  let pid = startPid;
  while (Number.isSafeInteger(pid) && pid > 0 && !visited.has(pid) && visited.size < maxDepth) {
    visited.add(pid);
    const info = readProcess(pid);
    if (info === undefined) return undefined;
    if (isClaudeComm(info.comm)) return pid;
    pid = info.ppid;
  }
  return undefined;
}
