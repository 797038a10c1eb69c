import { constants } from "node:fs";
import { lstat, mkdir, open } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { hasErrnoCode } from "./errno.js";

/**
 * Where a family of processes keeps its run files. The bee bridge and the Floot daemon use the same
 * mechanism under different names.
 */
export interface RunDirRule {
  /** An env var holding an absolute path that wins over everything else, e.g. `BEE_RUN_DIR`. */
  overrideVar: string;
  /** The subdirectory of `$XDG_RUNTIME_DIR`, e.g. `bee`. */
  runtimeSubdir: string;
  /** The fallback under the home directory, e.g. `.bee/run`. */
  homeSubdir: string;
}

export const beeRunDirRule: RunDirRule = {
  overrideVar: "BEE_RUN_DIR",
  runtimeSubdir: "bee",
  homeSubdir: ".bee/run",
};

export type RunDirErrorCode = "relative-path" | "symlink" | "not-a-directory" | "foreign-owner";

export class RunDirError extends Error {
  override readonly name = "RunDirError";
  constructor(
    readonly code: RunDirErrorCode,
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

export interface RunDirSources {
  env: Readonly<Record<string, string | undefined>>;
  homeDir: string;
}

/** `<overrideVar>`, else `$XDG_RUNTIME_DIR/<runtimeSubdir>`, else `<homeDir>/<homeSubdir>`. Empty values count as unset. */
export function resolveRunDir(rule: RunDirRule, { env, homeDir }: RunDirSources): string {
  const override = env[rule.overrideVar];
  if (override) {
    // The bridge and its hook run with different working directories: a relative path would name two dirs.
    if (!isAbsolute(override)) {
      throw new RunDirError(
        "relative-path",
        override,
        `${rule.overrideVar} must be an absolute path, got ${JSON.stringify(override)}`,
      );
    }
    return override;
  }
  const runtimeDir = env.XDG_RUNTIME_DIR;
  // The XDG base directory spec says a relative XDG_RUNTIME_DIR is invalid and must be ignored.
  if (runtimeDir && isAbsolute(runtimeDir)) {
    return join(runtimeDir, rule.runtimeSubdir);
  }
  if (!isAbsolute(homeDir)) {
    throw new RunDirError(
      "relative-path",
      homeDir,
      `home directory must be an absolute path, got ${JSON.stringify(homeDir)}`,
    );
  }
  return join(homeDir, rule.homeSubdir);
}

export interface EnsureRunDirOptions {
  /** The uid that must own the dir; defaults to the current process's. */
  expectedUid?: number;
}

/**
 * mkdir -p, then refuse a symlink, a non-directory or a dir owned by another uid, and force mode 0700
 * even when the dir already existed with looser modes.
 */
export async function ensureRunDir(path: string, options: EnsureRunDirOptions = {}): Promise<void> {
  const expectedUid = options.expectedUid ?? process.getuid?.();
  let mkdirError: unknown;
  await mkdir(path, { recursive: true, mode: 0o700 }).catch((error: unknown) => {
    mkdirError = error;
  });
  // When something is in the way (a file, a dangling symlink), mkdir fails with a vague EEXIST or
  // ENOENT: the checks below say what it is instead.
  const linkStats = await lstat(path).catch((error: unknown) => {
    throw mkdirError ?? error;
  });
  if (linkStats.isSymbolicLink()) {
    throw new RunDirError("symlink", path, `run dir ${path} is a symlink; refusing to use it`);
  }
  if (!linkStats.isDirectory()) {
    throw new RunDirError("not-a-directory", path, `run dir ${path} exists but is not a directory`);
  }

  // Check and chmod through one descriptor opened without following links, so the dir cannot be
  // swapped for a symlink between the lstat above and the chmod below.
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    if (hasErrnoCode(error, "ELOOP")) {
      throw new RunDirError("symlink", path, `run dir ${path} is a symlink; refusing to use it`);
    }
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isDirectory()) {
      throw new RunDirError("not-a-directory", path, `run dir ${path} exists but is not a directory`);
    }
    if (expectedUid !== undefined && stats.uid !== expectedUid) {
      throw new RunDirError(
        "foreign-owner",
        path,
        `run dir ${path} is owned by uid ${stats.uid}, not by uid ${expectedUid}; refusing to use it`,
      );
    }
    if ((stats.mode & 0o7777) !== 0o700) {
      await handle.chmod(0o700);
    }
  } finally {
    await handle.close();
  }
}
