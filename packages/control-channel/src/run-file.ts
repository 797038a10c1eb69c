import { constants, unlinkSync } from "node:fs";
import { open, readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { describeIssues, LegacyRunFile, RunFile } from "@bridgeworks/protocol";
import { hasErrnoCode } from "./errno.js";
import { isPidAlive as realIsPidAlive } from "./pid.js";
import { type WritePrivateFileOptions, writePrivateFileAtomic } from "./private-file.js";

const runFileNamePattern = /^([1-9][0-9]*)\.json$/;
// Temp files are dotfiles that do not end in `.json`: nobody looking for run files ever opens a partial one.
const tempFileNamePattern = /^\.([1-9][0-9]*)\.[0-9a-f]+\.tmp$/;

export function runFileName(claudePid: number): string {
  assertPid(claudePid, "claudePid");
  return `${claudePid}.json`;
}

export function runFilePath(runDir: string, claudePid: number): string {
  return join(runDir, runFileName(claudePid));
}

export type WriteRunFileOptions = WritePrivateFileOptions;

/** Writes `<runDir>/<claudePid>.json` atomically with mode 0600. Returns the run file's path. */
export async function writeRunFile(
  runDir: string,
  claudePid: number,
  runFile: RunFile,
  options: WriteRunFileOptions = {},
): Promise<string> {
  const target = runFilePath(runDir, claudePid);
  await writePrivateFileAtomic(target, `${JSON.stringify(RunFile.parse(runFile))}\n`, options);
  return target;
}

export type ReadRunFileResult =
  | { ok: true; runFile: RunFile }
  | { ok: false; reason: "missing"; message: string }
  /** Written by an older bee, without the bridge's start time: nothing tells its bridge from a reused pid. */
  | { ok: false; reason: "outdated"; message: string }
  | { ok: false; reason: "invalid"; message: string };

/** Reads and validates a run file. Never follows a symlink. */
export async function readRunFile(path: string): Promise<ReadRunFileResult> {
  let text: string;
  try {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (hasErrnoCode(error, "ENOENT")) {
      return { ok: false, reason: "missing", message: `no run file at ${path}` };
    }
    if (hasErrnoCode(error, "ELOOP")) {
      return { ok: false, reason: "invalid", message: `run file ${path} is a symlink` };
    }
    throw error;
  }

  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: "invalid", message: `run file ${path} is not valid JSON` };
  }
  const parsed = RunFile.safeParse(json);
  if (!parsed.success && LegacyRunFile.safeParse(json).success) {
    return {
      ok: false,
      reason: "outdated",
      message: `run file ${path} was written by an older bee (it names no process start time), so its bridge cannot be told from a reused pid`,
    };
  }
  if (!parsed.success) {
    // Issue paths and messages name fields only; they never echo a value such as the token.
    const problems = describeIssues(parsed.error.issues, { root: "(root)" });
    return { ok: false, reason: "invalid", message: `run file ${path} is invalid: ${problems}` };
  }
  return { ok: true, runFile: parsed.data };
}

/** Removes a run file synchronously (safe in a signal handler); removing a missing file is fine. */
export function removeRunFileSync(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if (!hasErrnoCode(error, "ENOENT")) throw error;
  }
}

export interface SweepOptions {
  isPidAlive?: (pid: number) => boolean;
}

/**
 * Removes `<pid>.json` run files (and leftover temp files) whose claude pid is dead. Returns the
 * removed paths. Other files are left alone.
 */
export async function sweepStaleRunFiles(runDir: string, options: SweepOptions = {}): Promise<string[]> {
  const isPidAlive = options.isPidAlive ?? realIsPidAlive;
  const removed: string[] = [];
  for (const entry of await readdir(runDir, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const match = runFileNamePattern.exec(entry.name) ?? tempFileNamePattern.exec(entry.name);
    const pid = Number(match?.[1]);
    if (!match || !Number.isSafeInteger(pid) || isPidAlive(pid)) continue;
    const path = join(runDir, entry.name);
    try {
      await unlink(path);
      removed.push(path);
    } catch (error) {
      // Another sweeper got there first.
      if (!hasErrnoCode(error, "ENOENT")) throw error;
    }
  }
  return removed;
}

function assertPid(pid: number, name: string): void {
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    throw new RangeError(`${name} must be a positive integer, got ${pid}`);
  }
}
