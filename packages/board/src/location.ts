import { isAbsolute, join } from "node:path";
import { argumentError } from "./errors.js";

/**
 * Where the machine's shared board lives: `BEE_BOARD` when set, else `$XDG_STATE_HOME/bee/board.db`,
 * else `~/.local/state/bee/board.db`. A relative `XDG_STATE_HOME` is ignored, as the XDG spec asks;
 * a relative `BEE_BOARD` is refused, since every bridge must agree on one file whatever its cwd.
 */
export function resolveBoardLocation(
  env: Readonly<Record<string, string | undefined>>,
  homedir: string,
): string {
  const explicit = env.BEE_BOARD;
  if (explicit !== undefined && explicit !== "") {
    if (!isAbsolute(explicit)) throw argumentError("BEE_BOARD", `must be an absolute path, got ${explicit}`);
    return explicit;
  }
  const stateHome = env.XDG_STATE_HOME;
  if (stateHome !== undefined && isAbsolute(stateHome)) return join(stateHome, "bee", "board.db");
  if (!isAbsolute(homedir)) throw argumentError("homedir", `must be an absolute path, got ${homedir}`);
  return join(homedir, ".local", "state", "bee", "board.db");
}
