import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  type Stats,
} from "node:fs";

/**
 * The one check of every dir floot keeps private things in (state dir, runtime dir, the API socket's
 * dir), as tmux checks its socket dir: lstat (a symlink is refused, never followed), the owner must be
 * the user, and nobody else may write to it.
 */
export type PrivateDirProblemCode =
  | "missing"
  | "symlink"
  | "not_a_directory"
  | "foreign_owner"
  | "open_to_others";

export interface PrivateDirProblem {
  code: PrivateDirProblemCode;
  /** Names the path and what is wrong with it. */
  message: string;
}

export class PrivateDirError extends Error {
  override readonly name = "PrivateDirError";
  constructor(
    readonly code: PrivateDirProblemCode,
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

export function currentUid(): number {
  return process.getuid?.() ?? 0;
}

/** What is wrong with `path` as a private dir of `uid`, or undefined when nothing is. */
export function privateDirProblem(path: string, uid = currentUid()): PrivateDirProblem | undefined {
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch (error) {
    if (hasErrnoCode(error, "ENOENT")) return { code: "missing", message: `${path} does not exist` };
    throw error;
  }
  return problemOf(path, stats, uid);
}

function problemOf(
  path: string,
  stats: { uid: number; mode: number; isDirectory(): boolean; isSymbolicLink(): boolean },
  uid: number,
): PrivateDirProblem | undefined {
  if (stats.isSymbolicLink()) return { code: "symlink", message: `${path} is a symlink` };
  if (!stats.isDirectory()) return { code: "not_a_directory", message: `${path} is not a directory` };
  if (stats.uid !== uid)
    return { code: "foreign_owner", message: `${path} is owned by uid ${stats.uid}, not by uid ${uid}` };
  if ((stats.mode & 0o022) !== 0) {
    const mode = (stats.mode & 0o7777).toString(8).padStart(4, "0");
    return { code: "open_to_others", message: `${path} is writable by group or others (mode ${mode})` };
  }
  return undefined;
}

/**
 * Creates `path` 0700 (and missing parents), or takes it when it already is a private dir of `uid`
 * (forcing 0700 through a descriptor opened without following links). Anything else is refused with
 * a `PrivateDirError` naming the path and the problem.
 */
export function ensurePrivateDir(path: string, what: string, uid = currentUid()): void {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch (error) {
    // Something in the way (a file, a dangling symlink): the checks below say what it is.
    if (!hasErrnoCode(error, "EEXIST") && !hasErrnoCode(error, "ENOENT")) throw error;
  }
  const refuse = (problem: PrivateDirProblem) =>
    new PrivateDirError(problem.code, path, `${what} ${problem.message}; refusing to use it`);
  const problem = privateDirProblem(path, uid);
  if (problem) throw refuse(problem);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    if (hasErrnoCode(error, "ELOOP")) throw refuse({ code: "symlink", message: `${path} is a symlink` });
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    const swapped = problemOf(path, stats, uid);
    if (swapped) throw refuse(swapped);
    if ((stats.mode & 0o077) !== 0) fchmodSync(fd, 0o700);
  } finally {
    closeSync(fd);
  }
}

function hasErrnoCode(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}
