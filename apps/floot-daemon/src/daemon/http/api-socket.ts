import { chmodSync, lstatSync, type Stats, unlinkSync } from "node:fs";
import type { Server } from "node:http";

/**
 * Serves `server` on the unix socket `path` (0600; its dir is the daemon's private runtime dir, so only
 * the daemon's user reaches it). A socket a dead daemon left there is replaced: the caller holds the
 * state-dir lock, so no live daemon serves it. Anything else in the way is refused.
 */
export async function listenOnSocket(server: Server, path: string): Promise<void> {
  const stale = lstatOrUndefined(path);
  if (stale !== undefined) {
    if (!stale.isSocket()) throw new Error(`${path} exists and is not a socket; refusing to replace it`);
    unlinkSync(path);
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
