import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

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
  const xdg = sources.env.XDG_STATE_HOME;
  // The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
  if (xdg && isAbsolute(xdg)) return join(xdg, "floot");
  return join(sources.env.HOME || sources.homeDir || homedir(), ".local", "state", "floot");
}

export const daemonFileName = "daemon.json";
export const journalFileName = "journal.sqlite";
export const lockFileName = "daemon.lock";
