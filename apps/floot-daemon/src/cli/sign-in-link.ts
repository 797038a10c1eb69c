import { closeSync, openSync, writeSync } from "node:fs";

/**
 * Writes a sign-in link to the controlling terminal (`/dev/tty`) only: stderr may be a log file, and a
 * link there would be a credential at rest. Without a terminal, says how to get one instead.
 */
export function printSignInLink(
  mint: () => string,
  stderr: NodeJS.WritableStream,
  terminal = "/dev/tty",
): boolean {
  let fd: number;
  try {
    fd = openSync(terminal, "w");
  } catch {
    stderr.write("no terminal to print a sign-in link to: run floot open for one\n");
    return false;
  }
  try {
    writeSync(fd, `\nSign in to the web UI (one-time link, valid for a minute):\n  ${mint()}\n\n`);
    return true;
  } finally {
    closeSync(fd);
  }
}
