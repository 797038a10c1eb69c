import { FlootClient, locateDaemonSocket } from "../client/api-client.js";
import { resolveStateDir } from "../state-dir.js";
import type { FlootContext } from "./context.js";

/** The options of every command that talks to a running daemon. */
export const daemonOptions = {
  state: {
    type: "string",
    placeholder: "DIR",
    summary: "the daemon's state dir (default FLOOT_STATE_DIR, else $XDG_STATE_HOME/floot)",
    complete: "directory",
  },
  json: { type: "boolean", summary: "print the API's record as JSON" },
} as const;

/**
 * The daemon of the state dir, over the unix socket its `daemon.json` names, once the socket proved to
 * be the user's own (never its TCP port); called only after usage was checked.
 */
export function connect(context: FlootContext, state: string | undefined): FlootClient {
  const stateDir = resolveStateDir({ flag: state, env: context.env, cwd: context.cwd });
  return new FlootClient({ socket: locateDaemonSocket(stateDir) });
}

/** Writes a record as JSON with `--json`, else as the text `human` gives. */
export function show(context: FlootContext, json: boolean, value: unknown, human: () => string): void {
  context.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human()}\n`);
}

export function pathId(id: string): string {
  return encodeURIComponent(id);
}
