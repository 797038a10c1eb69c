import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { xdgStateHome } from "@bridgeworks/runtime";

export interface StateDirSources {
  /** `--state DIR`. */
  flag?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  homeDir?: string;
  cwd?: string;
}

/** `--state`, else `FLOOT_STATE_DIR`, else `$XDG_STATE_HOME/floot`, else `~/.local/state/floot`. */
export function resolveStateDir(sources: StateDirSources): string {
  const cwd = sources.cwd ?? process.cwd();
  if (sources.flag) return resolve(cwd, sources.flag);
  const fromEnv = sources.env.FLOOT_STATE_DIR;
  if (fromEnv) return resolve(cwd, fromEnv);
  return join(xdgStateHome(sources.env, sources.env.HOME || sources.homeDir || homedir()), "floot");
}

export const daemonFileName = "daemon.json";
export const journalFileName = "journal.sqlite";
export const lockFileName = "daemon.lock";
/** In the daemon's runtime dir: the API's unix socket, the CLI's only way in. */
export const apiSocketName = "api.sock";
