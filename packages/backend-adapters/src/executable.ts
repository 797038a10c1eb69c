import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";

export type ExecutableLookup =
  | { found: true; path: string }
  | { found: false; reason: "not_found" }
  /** A file by that name exists (`path`, the first one) but may not be executed. */
  | { found: false; reason: "not_executable"; path: string };

/**
 * Finds `command` the way `execvp` (and so `child_process.spawn`) does: a name with a slash is taken
 * as a path (relative to `cwd`); a bare name is looked up in `path`'s directories in order (an empty
 * entry is `cwd`), skipping files that may not be executed.
 */
export function findExecutable(command: string, path: string | undefined, cwd: string): ExecutableLookup {
  if (command.includes("/")) {
    const candidate = isAbsolute(command) ? command : resolve(cwd, command);
    const kind = fileKind(candidate);
    if (kind === "executable") return { found: true, path: candidate };
    return kind === "missing" ? { found: false, reason: "not_found" } : notExecutable(candidate);
  }
  let blocked: string | undefined;
  for (const dir of (path ?? "").split(delimiter)) {
    const candidate = join(dir === "" ? cwd : dir, command);
    const kind = fileKind(candidate);
    if (kind === "executable") return { found: true, path: candidate };
    if (kind === "not_executable") blocked ??= candidate;
  }
  return blocked === undefined ? { found: false, reason: "not_found" } : notExecutable(blocked);
}

function notExecutable(path: string): ExecutableLookup {
  return { found: false, reason: "not_executable", path };
}

function fileKind(path: string): "executable" | "not_executable" | "missing" {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(path, { throwIfNoEntry: false });
  } catch {
    // ENOTDIR, ELOOP, EACCES on a directory on the way: nothing that could be run.
    return "missing";
  }
  if (stats === undefined) return "missing";
  if (!stats.isFile()) return "not_executable";
  try {
    accessSync(path, constants.X_OK);
    return "executable";
  } catch {
    return "not_executable";
  }
}
