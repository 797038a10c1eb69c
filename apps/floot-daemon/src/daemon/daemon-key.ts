import {
  closeSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

export const daemonKeyFileName = "daemon.key";

/**
 * The daemon's persistent secret key (32 CSPRNG bytes, hex, `<stateDir>/daemon.key`, 0600): what the web
 * UI's identity proofs are keyed on, so a restarted daemon is still "the same daemon" to an open page and a
 * process that took the port is not. Created once (link(2) never replaces); a symlink or a file of another uid is refused.
 */
export function loadDaemonKey(stateDir: string, randomBytes: (size: number) => Buffer): Buffer {
  const path = join(stateDir, daemonKeyFileName);
  // Written whole to a private temp file, then linked into place: a crash never leaves half a key.
  const temp = join(stateDir, `.${daemonKeyFileName}.${process.pid}.${randomBytes(6).toString("hex")}`);
  const fd = openSync(temp, "wx", 0o600);
  try {
    writeSync(fd, `${randomBytes(32).toString("hex")}\n`);
    fsyncSync(fd);
    closeSync(fd);
    linkSync(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(temp, { force: true });
  }
  const stat = lstatSync(path);
  if (!stat.isFile() || (process.getuid && stat.uid !== process.getuid()) || (stat.mode & 0o077) !== 0) {
    throw new Error(`${path} must be a regular 0600 file of this user`);
  }
  const hex = readFileSync(path, "utf8").trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${path} is not a daemon key (64 hex digits)`);
  return Buffer.from(hex, "hex");
}
