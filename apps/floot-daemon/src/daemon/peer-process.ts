import { execFile } from "node:child_process";
import { fstatSync, readFileSync, readlinkSync } from "node:fs";
import type { Socket } from "node:net";
import type { PeerProcess } from "@bridgeworks/protocol";

/** The processes holding the other end of a connection, or why they could not be found. */
export type PeerLookup = { peers: PeerProcess[] } | { unknown: string };

/** Runs `ss` with these arguments and gives its stdout (iproute2's socket statistics). */
export type RunSs = (args: readonly string[]) => Promise<string>;

export interface PeerProcessOptions {
  runSs?: RunSs;
  platform?: NodeJS.Platform;
  /** Reads what /proc says of a pid; `undefined` when it is gone. */
  describe?: (pid: number) => PeerProcess | undefined;
}

/**
 * Who is at the other end of a local connection, from the kernel's own tables: Node has no
 * `SO_PEERCRED`, and a unix socket's peer is named only by the kernel's socket diagnostics, which
 * iproute2's `ss` reads (`ss -xp`: each socket's inode, its peer's inode and the processes holding it).
 * A TCP loopback connection's client is the socket whose source port is the connection's remote port.
 * Linux only; elsewhere, and without `ss`, the answer says why the peer is unknown.
 */
export function createPeerProcessLookup(options: PeerProcessOptions = {}) {
  const runSs = options.runSs ?? defaultRunSs;
  const describe = options.describe ?? describeProcess;
  const platform = options.platform ?? process.platform;

  return async function lookUpPeer(socket: Socket): Promise<PeerLookup> {
    if (platform !== "linux") return { unknown: `peer processes are read on Linux only (${platform})` };
    let output: string;
    let pids: number[];
    try {
      if (socket.remotePort !== undefined) {
        output = await runSs(["-tpnH", "state", "established", `( sport = :${socket.remotePort} )`]);
        pids = tcpHolders(output, socket.remotePort);
      } else {
        const inode = socketInode(socket);
        if (inode === undefined) return { unknown: "the connection's socket has no descriptor" };
        output = await runSs(["-xpnH"]);
        pids = unixPeerHolders(output, inode);
      }
    } catch (error) {
      return { unknown: `ss (iproute2) could not be run: ${(error as Error).message}` };
    }
    const peers = [...new Set(pids)].flatMap((pid) => describe(pid) ?? []);
    if (peers.length === 0) return { unknown: "no process holds the other end (it exited)" };
    return { peers };
  };
}

function defaultRunSs(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      "ss",
      [...args],
      { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 10_000 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

function socketInode(socket: Socket): number | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (fd === undefined || fd < 0) return undefined;
  return fstatSync(fd).ino;
}

const usersPattern = /users:\((.*)\)\s*$/;
const holderPattern = /pid=(\d+)/g;

function holdersOf(line: string): number[] {
  const users = usersPattern.exec(line)?.[1];
  return users === undefined ? [] : [...users.matchAll(holderPattern)].map((match) => Number(match[1]));
}

/**
 * `ss -xpnH` lines: `u_str ESTAB 0 0 <local addr> <local inode> <peer addr> <peer inode> [users:(…)]`,
 * where an address may hold spaces (a path): the two inodes are read from the line's end.
 */
export function unixPeerHolders(output: string, serverInode: number): number[] {
  const pattern = /\s(\d+)\s+\S+\s+(\d+)(?:\s+users:\(.*\))?\s*$/;
  return output.split("\n").flatMap((line) => {
    const match = pattern.exec(line);
    return match && Number(match[2]) === serverInode ? holdersOf(line) : [];
  });
}

/** `ss -tpnH` lines: `0 0 127.0.0.1:<sport> 127.0.0.1:<dport> users:(…)`; the one whose source is `port`. */
export function tcpHolders(output: string, port: number): number[] {
  return output.split("\n").flatMap((line) => {
    const [, , local] = line.trim().split(/\s+/);
    return local?.endsWith(`:${port}`) ? holdersOf(line) : [];
  });
}

function describeProcess(pid: number): PeerProcess | undefined {
  try {
    const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    if (uid === undefined) return undefined;
    let executable: string;
    try {
      executable = readlinkSync(`/proc/${pid}/exe`);
    } catch {
      executable = "(unreadable)";
    }
    return { pid, uid: Number(uid), executable };
  } catch {
    return undefined;
  }
}
