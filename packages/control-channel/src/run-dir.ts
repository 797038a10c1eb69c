import { constants, existsSync } from "node:fs";
import { lstat, mkdir, open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { xdgRuntimeDir } from "@bridgeworks/runtime";
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
  /** Where to go without `$XDG_RUNTIME_DIR`. */
  fallback: RunDirFallback;
}

export type RunDirFallback =
  /** A dir under the home directory, e.g. `.bee/run`. */
  | { kind: "home"; subdir: string }
  /**
   * A per-user dir on a tmpfs, for files whose bytes must never reach a disk: `/dev/shm/<prefix>-<uid>`,
   * else `<tmpdir>/<prefix>-<uid>`. Others can create names there first: `ensureRunDir` refuses
   * a dir that is a symlink or not the user's own.
   */
  | { kind: "tmpfs"; prefix: string };

export const beeRunDirRule: RunDirRule = {
  overrideVar: "BEE_RUN_DIR",
  runtimeSubdir: "bee",
  fallback: { kind: "home", subdir: ".bee/run" },
};

export type RunDirErrorCode = "relative_path" | "symlink" | "not_a_directory" | "foreign_owner";

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
  /** For a tmpfs fallback: the user's uid (default this process's) and where shared memory is mounted. */
  uid?: number;
  sharedMemoryDir?: string | undefined;
  tmpDir?: string;
}

/**
 * `<overrideVar>`, else `$XDG_RUNTIME_DIR/<runtimeSubdir>`, else the rule's fallback. Empty values count
 * as unset; a relative override or home dir is refused (the processes sharing the dir differ in cwd).
 */
export function resolveRunDir(rule: RunDirRule, sources: RunDirSources): string {
  const { env, homeDir } = sources;
  const override = env[rule.overrideVar];
  if (override) {
    if (!isAbsolute(override)) {
      throw new RunDirError(
        "relative_path",
        override,
        `${rule.overrideVar} must be an absolute path, got ${JSON.stringify(override)}`,
      );
    }
    return override;
  }
  const runtimeDir = xdgRuntimeDir(env);
  if (runtimeDir !== undefined) return join(runtimeDir, rule.runtimeSubdir);
  if (rule.fallback.kind === "tmpfs") {
    const uid = sources.uid ?? process.getuid?.() ?? 0;
    const sharedMemoryDir =
      "sharedMemoryDir" in sources
        ? sources.sharedMemoryDir
        : existsSync("/dev/shm")
          ? "/dev/shm"
          : undefined;
    return join(sharedMemoryDir ?? sources.tmpDir ?? tmpdir(), `${rule.fallback.prefix}-${uid}`);
  }
  if (!isAbsolute(homeDir)) {
    throw new RunDirError(
      "relative_path",
      homeDir,
      `home directory must be an absolute path, got ${JSON.stringify(homeDir)}`,
    );
  }
  return join(homeDir, rule.fallback.subdir);
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
    throw new RunDirError("not_a_directory", path, `run dir ${path} exists but is not a directory`);
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
      throw new RunDirError("not_a_directory", path, `run dir ${path} exists but is not a directory`);
    }
    if (expectedUid !== undefined && stats.uid !== expectedUid) {
      throw new RunDirError(
        "foreign_owner",
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
