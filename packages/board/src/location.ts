import { isAbsolute, join } from "node:path";
import { xdgStateHome } from "@bridgeworks/runtime";
import { argumentError } from "./errors.js";

const postgresScheme = /^postgres(?:ql)?:\/\//i;

/** Whether a board location names a PostgreSQL server (`postgres://` or `postgresql://`) rather than a file. */
export function isPostgresLocation(location: string): boolean {
  return postgresScheme.test(location);
}

/**
 * The location as it may be shown in a message or a log: a URL's password (in the userinfo or a
 * `password` parameter) becomes `***`; an unparseable URL shows only its scheme, never a guess at
 * where the password ends.
 */
export function redactBoardLocation(location: string): string {
  if (!isPostgresLocation(location)) return location;
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    return `${location.slice(0, location.indexOf(":"))}://(unparseable URL)`;
  }
  if (url.password !== "") url.password = "***";
  for (const name of [...url.searchParams.keys()]) {
    if (name.toLowerCase() === "password") url.searchParams.set(name, "***");
  }
  return url.toString();
}

/**
 * Where the board lives: `BEE_BOARD` when set, else `$XDG_STATE_HOME/bee/board.db`, else
 * `~/.local/state/bee/board.db`. A `postgres://` or `postgresql://` `BEE_BOARD` is a team's shared
 * server and is returned as it is. A relative `XDG_STATE_HOME` is ignored, as the XDG spec asks;
 * a relative `BEE_BOARD` path is refused, since every bridge must agree on one file whatever its cwd.
 */
export function resolveBoardLocation(
  env: Readonly<Record<string, string | undefined>>,
  homedir: string,
): string {
  const explicit = env.BEE_BOARD;
  if (explicit !== undefined && explicit !== "") {
    if (isPostgresLocation(explicit)) return explicit;
    if (!isAbsolute(explicit)) {
      throw argumentError("BEE_BOARD", `must be an absolute path or a postgres:// URL, got ${explicit}`);
    }
    return explicit;
  }
  const stateHome = xdgStateHome(env, homedir);
  if (!isAbsolute(stateHome)) throw argumentError("homedir", `must be an absolute path, got ${homedir}`);
  return join(stateHome, "bee", "board.db");
}
