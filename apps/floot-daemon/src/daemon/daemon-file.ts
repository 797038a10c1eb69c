import { readFileSync, unlinkSync } from "node:fs";
import { writePrivateFileAtomic } from "@bridgeworks/control-channel";

/** `<state>/last-port.json`: the port the last daemon served, kept when it stops (daemon.json is not). */
export const lastPortFileName = "last-port.json";

/** The port the last daemon of this state dir served, whether it stopped cleanly or was killed. */
export function readLastPort(path: string): number | undefined {
  try {
    const { port } = JSON.parse(readFileSync(path, "utf8")) as { port?: unknown };
    return typeof port === "number" && Number.isInteger(port) && port > 0 && port < 65_536 ? port : undefined;
  } catch {
    return undefined;
  }
}

export function writeLastPort(path: string, port: number): Promise<void> {
  return writePrivateFileAtomic(path, `${JSON.stringify({ port })}\n`);
}

/** The port and socket a previous daemon of this state dir named (the file is the user's own: the state dir is private). */
export function readPreviousDaemonFile(path: string): { port?: number; socket?: string } {
  try {
    const { port, socket } = JSON.parse(readFileSync(path, "utf8")) as { port?: unknown; socket?: unknown };
    return {
      ...(typeof port === "number" && Number.isInteger(port) && port > 0 && port < 65_536 && { port }),
      ...(typeof socket === "string" && socket.startsWith("/") && { socket }),
    };
  } catch {
    return {};
  }
}

/** Removes `daemon.json` only while it still names this process (a newer daemon may have replaced it). */
export function removeOwnDaemonFile(path: string): void {
  try {
    const current = JSON.parse(readFileSync(path, "utf8")) as { pid?: unknown };
    if (current.pid === process.pid) unlinkSync(path);
  } catch {
    // Gone or unreadable: nothing of ours to remove.
  }
}
