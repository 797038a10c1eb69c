import { mkdirSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import type { FlootWorld } from "./daemon-harness.js";

/**
 * Starts the world's daemon with a PATH that holds `claude` but no `codex`, written as a user's often
 * is: one run of 150 characters with no hyphen or space, where a browser finds no place to break a
 * line. A Codex turn then fails `cli_not_found`, its error naming that PATH.
 */
export async function startDaemonWithoutCodex(w: FlootWorld): Promise<string> {
  const bin = join(w.env.root, "claudeonly");
  mkdirSync(bin);
  symlinkSync(join(w.env.binDir, "claude"), join(bin, "claude"));
  const usual = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];
  const more = ["/usr/games", "/usr/local/games", "/snap/bin", "/opt/nodejs/current/bin"];
  const path = [bin, ...usual, ...more, dirname(process.execPath)].join(":");
  await w.startDaemon({ PATH: path });
  return path;
}
