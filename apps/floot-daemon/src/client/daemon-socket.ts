import { lstatSync, readFileSync, type Stats } from "node:fs";
import { dirname, join } from "node:path";
import { FlootDaemonFile } from "@bridgeworks/protocol";
import { currentUid, privateDirProblem } from "../private-dir.js";
import { daemonFileName } from "../state-dir.js";
import { ClientError, startDaemonHint } from "./client-error.js";

/**
 * The API socket of the daemon on `stateDir`, checked before anything is sent to it: the state dir and
 * `daemon.json` are the user's and writable by nobody else, and the socket is a socket of the user's,
 * 0600, in a private dir of the user's (no symlink anywhere on the last step), so only the user (or
 * root) can have bound it. The port and token in `daemon.json` are never read here: the CLI sends
 * nothing to TCP.
 */
export function locateDaemonSocket(stateDir: string, uid = currentUid()): string {
  const path = join(stateDir, daemonFileName);
  const stateProblem = privateDirProblem(stateDir, uid);
  if (stateProblem?.code === "missing") throw missingDaemon(stateDir, path);
  if (stateProblem) throw new ClientError(`state dir ${stateProblem.message}; refusing to use it`);
  const file = lstatOrUndefined(path);
  if (file === undefined) throw missingDaemon(stateDir, path);
  if (!file.isFile() || file.uid !== uid || (file.mode & 0o022) !== 0) {
    throw new ClientError(
      `${path} is not a regular file of uid ${uid} that only it can write; refusing to use it`,
    );
  }
  let parsed: ReturnType<typeof FlootDaemonFile.safeParse>;
  try {
    parsed = FlootDaemonFile.safeParse(JSON.parse(readFileSync(path, "utf8")));
  } catch {
    throw new ClientError(`${path} is not a valid daemon file`);
  }
  if (!parsed.success) throw new ClientError(`${path} is not a valid daemon file`);
  return checkSocket(parsed.data.socket, uid);
}

/** Refuses a socket that another user could have bound; returns the path when it is the user's own. */
export function checkSocket(socket: string, uid = currentUid()): string {
  const dirProblem = privateDirProblem(dirname(socket), uid);
  if (dirProblem) throw new ClientError(`the daemon's socket dir ${dirProblem.message}; refusing to connect`);
  const stats = lstatOrUndefined(socket);
  if (stats === undefined)
    throw new ClientError(
      `the floot daemon is not running (its socket ${socket} is gone); ${startDaemonHint}`,
    );
  if (!stats.isSocket()) throw new ClientError(`${socket} is not a socket; refusing to connect`);
  if (stats.uid !== uid)
    throw new ClientError(`${socket} is owned by uid ${stats.uid}, not by uid ${uid}; refusing to connect`);
  if ((stats.mode & 0o077) !== 0)
    throw new ClientError(`${socket} is open to group or others; refusing to connect`);
  return socket;
}

function missingDaemon(stateDir: string, path: string): ClientError {
  return new ClientError(`no floot daemon runs on ${stateDir} (${path} is missing); ${startDaemonHint}`);
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
