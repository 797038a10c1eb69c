import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import {
  connectKeeper,
  type KeeperClient,
  KeeperUnavailable,
  openKeeper,
} from "@bridgeworks/backend-adapters";
import { writePrivateFileAtomic } from "@bridgeworks/control-channel";
import { describeError, type Logger } from "@bridgeworks/runtime";
import { currentUid } from "../private-dir.js";

/** In the runtime dir: each adopted turn's rebind files (turn-mounts.ts). */
export const rebindDirName = "rebind";

/** In the runtime dir: the keeper's socket, its key, and the spools of the CLIs it keeps. */
export const keeperFileNames = ["keeper.sock", "keeper.key", "spool"] as const;

export interface KeeperPlaces {
  socketPath: string;
  keyPath: string;
  spoolDir: string;
}

export function keeperPlaces(runtimeDir: string): KeeperPlaces {
  return {
    socketPath: join(runtimeDir, "keeper.sock"),
    keyPath: join(runtimeDir, "keeper.key"),
    spoolDir: join(runtimeDir, "spool"),
  };
}

const keyBytes = 32;
/** The key's file holds it base64url, unpadded. */
const keyTextLength = 43;

/**
 * The state dir's keeper key: in the runtime dir (a tmpfs, 0600, this user's), so the next daemon of
 * the state dir proves itself to the keeper its predecessor started, and a reboot forgets it with the
 * keeper. Undefined when there is none (or it is not this user's, or not a key).
 */
export function readKeeperKey(keyPath: string, uid = currentUid()): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(keyPath, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.uid !== uid || (stats.mode & 0o077) !== 0 || stats.size !== keyTextLength)
      return undefined;
    const text = Buffer.alloc(keyTextLength);
    if (readSync(fd, text, 0, keyTextLength, 0) !== keyTextLength) return undefined;
    const key = Buffer.from(text.toString("latin1"), "base64url");
    return key.length === keyBytes ? key : undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Connects to the keeper of this runtime dir, or starts one. Only under the state-dir lock: the key is
 * minted (CSPRNG) when none is there, and a key that changed leaves any older keeper unproven.
 */
export async function openDaemonKeeper(
  runtimeDir: string,
  script: string | undefined,
  onPassedOver?: (reason: string) => void,
): Promise<KeeperClient> {
  const places = keeperPlaces(runtimeDir);
  let key = readKeeperKey(places.keyPath);
  if (key === undefined) {
    key = randomBytes(keyBytes);
    await writePrivateFileAtomic(places.keyPath, key.toString("base64url"));
  }
  mkdirSync(places.spoolDir, { recursive: true, mode: 0o700 });
  return openKeeper({
    socketPath: places.socketPath,
    key,
    spoolDir: places.spoolDir,
    ...(script !== undefined && { script }),
    ...(onPassedOver !== undefined && { onPassedOver }),
  });
}

/**
 * Ends every CLI the keeper of this runtime dir keeps, and the keeper: for `floot stop --cancel-turns`
 * once no daemon runs. Resolves false when no keeper proves the key there.
 */
export async function shutDownKeeper(runtimeDir: string, graceMs = 2_000): Promise<boolean> {
  const places = keeperPlaces(runtimeDir);
  const key = readKeeperKey(places.keyPath);
  if (key === undefined) return false;
  let keeper: KeeperClient;
  try {
    keeper = await connectKeeper(places.socketPath, key);
  } catch (error) {
    if (error instanceof KeeperUnavailable) return false;
    throw error;
  }
  const gone = new Promise<void>((resolve) => keeper.onClose(resolve));
  keeper.shutdown(graceMs);
  await gone;
  return true;
}

/** The daemon's link to its keeper: the client while connected, and how the daemon lets go of it. */
export interface KeeperLink {
  /** Undefined when there is no keeper (or it went away): CLIs then run under the daemon, as before. */
  client(): KeeperClient | undefined;
  /** Disconnects; a keeper that keeps nothing is ended too (else it exits once its CLIs are read). */
  close(): Promise<void>;
}

/**
 * The keeper link of a start (none when `runtime` is undefined: `FLOOT_KEEPER=off`). A runtime dir made
 * fresh for this start (the shared-tmpfs fallback) is found by no later daemon: its CLIs run under the
 * daemon, ended with it, as before the keeper.
 */
export async function connectTheKeeper(
  runtime: { path: string; replaced?: unknown } | undefined,
  script: string | undefined,
  logger: Logger,
): Promise<KeeperLink> {
  let client: KeeperClient | undefined;
  if (runtime === undefined) {
    logger.info("no CLI keeper (FLOOT_KEEPER=off): turns end with the daemon");
  } else if (runtime.replaced !== undefined) {
    logger.warn("no CLI keeper: the runtime dir is new at every start, so turns end with the daemon");
  } else {
    try {
      client = await openDaemonKeeper(runtime.path, script, (reason) =>
        // An older release's keeper, say: its CLIs are fenced and their turns recovered, not adopted.
        logger.warn("the keeper found there was not used; its turns go through recovery", { reason }),
      );
      const connected = client;
      connected.onClose(() => {
        if (client !== connected) return;
        client = undefined;
        logger.warn("the CLI keeper went away; new turns run under the daemon");
      });
    } catch (error) {
      logger.warn("no CLI keeper: turns end with the daemon", { error: describeError(error) });
    }
  }
  return {
    client: () => client,
    async close() {
      const closing = client;
      client = undefined;
      if (closing === undefined) return;
      const kept = await closing.list().catch(() => undefined);
      if (kept?.length === 0) closing.shutdown(0);
      closing.close();
    },
  };
}
