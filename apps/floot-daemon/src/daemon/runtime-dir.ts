import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmdirSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { type RunDirRule, resolveRunDir } from "@bridgeworks/control-channel";
import { xdgRuntimeDir } from "@bridgeworks/runtime";
import { currentUid, ensurePrivateDir, PrivateDirError, privateDirProblem } from "../private-dir.js";
import { keeperFileNames } from "./keeper-link.js";

/**
 * Where credential files and the API socket go: on a tmpfs when there is one, never under the state dir.
 * `FLOOT_RUNTIME_DIR` (absolute), else `$XDG_RUNTIME_DIR/floot`, else `/dev/shm/floot-<uid>`, else
 * `<tmpdir>/floot-<uid>`.
 */
export const flootRuntimeDirRule: RunDirRule = {
  overrideVar: "FLOOT_RUNTIME_DIR",
  runtimeSubdir: "floot",
  fallback: { kind: "tmpfs", prefix: "floot" },
};

export interface RuntimeDir {
  /** The daemon's own private dir (0700): `api.sock`, and `secrets/`. */
  path: string;
  /** Set when the usual base was unusable (another user's, open to others, a symlink) and a fresh dir replaced it. */
  replaced?: { base: string; problem: string };
}

/**
 * The runtime dir of the daemon on `stateDir`: one subdir per state dir under the base, every step a
 * private dir of this user (`ensurePrivateDir`). A base the user named (`FLOOT_RUNTIME_DIR`,
 * `$XDG_RUNTIME_DIR`) that is not private is refused; the shared-tmpfs fallback, where any user can
 * take the name first, is replaced by a fresh private dir (`mkdtemp`, named in `daemon.json`), so
 * another user can neither read nor swap what is in it, nor block a start.
 */
export function resolveRuntimeDir(
  stateDir: string,
  env: Readonly<Record<string, string | undefined>>,
  uid = currentUid(),
): RuntimeDir {
  const base = resolveRunDir(flootRuntimeDirRule, { env, homeDir: env.HOME || homedir(), uid });
  const named = Boolean(env[flootRuntimeDirRule.overrideVar]) || xdgRuntimeDir(env) !== undefined;
  try {
    ensurePrivateDir(base, "runtime dir", uid);
  } catch (error) {
    if (named || !(error instanceof PrivateDirError)) throw error;
    const fresh = mkdtempSync(`${base}-`);
    ensurePrivateDir(fresh, "runtime dir", uid);
    return { path: fresh, replaced: { base, problem: error.message } };
  }
  const path = join(base, createHash("sha256").update(stateDir).digest("hex").slice(0, 16));
  ensurePrivateDir(path, "runtime dir", uid);
  return { path };
}

/**
 * Removes what dead daemons of this state dir left on the tmpfs (secret files, a stale socket, sign-in
 * pages): all of `current`, and in the runtime dir the previous daemon named in `daemon.json` (when it
 * is another private dir of this user's) its socket, `secrets/` and `open/`, then the dir if that
 * emptied it. Only under the state-dir lock: no live daemon of this state dir uses them.
 */
export function removeDeadDaemonFiles(
  current: string,
  previousSocket: string | undefined,
  uid = currentUid(),
): void {
  for (const name of readdirSync(current)) {
    // The keeper outlives daemons: its socket, key and spools are its own until it exits. The secret
    // vault keeps the credential files of the turns it runs on (`SecretVault.open`).
    if ((keeperFileNames as readonly string[]).includes(name) || name === secretsDirName) continue;
    rmSync(join(current, name), { recursive: true, force: true });
  }
  if (previousSocket === undefined) return;
  const previous = dirname(previousSocket);
  if (previous === current || privateDirProblem(previous, uid) !== undefined) return;
  for (const name of [basename(previousSocket), secretsDirName, signInPagesDirName]) {
    rmSync(join(previous, name), { recursive: true, force: true });
  }
  try {
    rmdirSync(previous);
  } catch {
    // Not empty: not only ours.
  }
}

/** In the runtime dir: the secret vault's dir. */
export const secretsDirName = "secrets";

/** In the runtime dir: the 0600 redirect pages `floot open` hands the browser (`cli/sign-in-file.ts`). */
export const signInPagesDirName = "open";
