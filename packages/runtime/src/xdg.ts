import { isAbsolute, join } from "node:path";

// The XDG base directory spec: a relative value is invalid and must be ignored.

export type Environment = Readonly<Record<string, string | undefined>>;

/** `$XDG_STATE_HOME` when absolute, else `<homeDir>/.local/state`. */
export function xdgStateHome(env: Environment, homeDir: string): string {
  const stateHome = env.XDG_STATE_HOME;
  return stateHome && isAbsolute(stateHome) ? stateHome : join(homeDir, ".local", "state");
}

/** `$XDG_RUNTIME_DIR` when absolute; the spec names no fallback, so the caller picks one. */
export function xdgRuntimeDir(env: Environment): string | undefined {
  const runtimeDir = env.XDG_RUNTIME_DIR;
  return runtimeDir && isAbsolute(runtimeDir) ? runtimeDir : undefined;
}
