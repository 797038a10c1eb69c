import { closeSync, openSync, readdirSync, readSync, rmSync, writeSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import {
  type KeeperReply,
  KeeperRequest,
  type KeptCli,
  type KeptCliSpec,
  keeperProtocolVersion,
} from "@bridgeworks/protocol";
import { endSession } from "./cli-session.js";
import { startChild } from "./cli-spawner.js";
import { keeperProof, keeperProofHolds, mintKeeperNonce } from "./keeper-proof.js";
import { defaultMaxLineBytes } from "./line-splitter.js";
import { readProcStat, signalProcessGroup } from "./process-identity.js";

export interface KeeperOptions {
  /** Where daemons reach it: a unix socket in the daemon's private runtime dir. */
  socketPath: string;
  /** The state dir's keeper key: both ends prove they hold it. */
  key: Buffer;
  /** A private dir (0700) for each kept CLI's spool: everything it wrote to stdout, byte for byte. */
  spoolDir: string;
  /** Exits when it keeps nothing and no daemon is connected for this long. Default 30 s. */
  idleExitMs?: number;
  /**
   * Exits when every CLI it keeps has exited and no daemon came to read them for this long (their
   * turns then go through the next start's recovery). Default 1 h.
   */
  exitedGraceMs?: number;
  maxLineBytes?: number;
  /** Called once it has closed (default: `process.exit(0)`). */
  onClosed?: () => void;
}

interface Kept {
  id: string;
  pid: number;
  startTime: string;
  spool: string;
  fd: number;
  /** Bytes written to the spool: where the next one goes. */
  end: number;
  /** Length of the unfinished last line, to stop a CLI whose line outgrows the bound. */
  openLine: number;
  exit?: { code: number | null; signal: string | null };
  stderrTail: string;
  overflow?: number;
  reader?: Reader;
}

/** A connection streaming one kept CLI's lines: where it has read to, and its unfinished line. */
interface Reader {
  connection: Connection;
  position: number;
  lineStart: number;
  pending: Buffer[];
  exitSent: boolean;
  overflowSent: boolean;
}

interface Connection {
  socket: Socket;
  proven: boolean;
  nonce?: string;
  send(reply: KeeperReply): void;
}

const stderrTailBytes = 4_096;

/**
 * The CLI keeper (`keeper-main.ts`): spawns the CLIs a daemon asks for in their own sessions, writes
 * each one's stdin, and appends everything it writes to stdout to its spool, so a daemon that
 * restarts finds its turns' CLIs still running and reads each from where its journal stopped. It
 * outlives the daemon that started it (its own session; nothing of the daemon's reaches it but the
 * socket) and exits once it keeps nothing and no daemon is connected.
 */
export async function runKeeper(options: KeeperOptions): Promise<{ close(): Promise<void> }> {
  const kept = new Map<string, Kept>();
  const connections = new Set<Connection>();
  const maxLineBytes = options.maxLineBytes ?? defaultMaxLineBytes;
  const idleExitMs = options.idleExitMs ?? 30_000;
  const exitedGraceMs = options.exitedGraceMs ?? 60 * 60 * 1000;
  const self = readProcStat(process.pid);
  let idleTimer: NodeJS.Timeout | undefined;
  let closing = false;

  const server: Server = createServer((socket) => accept(socket));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  removeStaleSpools(options.spoolDir);
  armIdleExit();

  function armIdleExit(): void {
    clearTimeout(idleTimer);
    const running = [...kept.values()].some((each) => each.exit === undefined);
    if (running || [...connections].some((each) => each.proven)) return;
    idleTimer = setTimeout(() => void close(), kept.size > 0 ? exitedGraceMs : idleExitMs);
    idleTimer.unref?.();
  }

  function accept(socket: Socket): void {
    const connection: Connection = {
      socket,
      proven: false,
      send: (reply) => {
        if (!socket.destroyed) socket.write(`${JSON.stringify(reply)}\n`);
      },
    };
    connections.add(connection);
    let buffer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        handle(connection, line);
      }
      // Before the proof nothing long is said: a stranger cannot make it hold much.
      if (!connection.proven && buffer.length > 4_096) socket.destroy();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      connections.delete(connection);
      for (const each of kept.values()) if (each.reader?.connection === connection) delete each.reader;
      armIdleExit();
    });
  }

  function handle(connection: Connection, line: string): void {
    let request: KeeperRequest;
    try {
      request = KeeperRequest.parse(JSON.parse(line));
    } catch {
      connection.socket.destroy();
      return;
    }
    if (!connection.proven) {
      if (request.type === "hello" && connection.nonce === undefined) {
        connection.nonce = mintKeeperNonce();
        connection.send({
          type: "hello",
          version: keeperProtocolVersion,
          pid: process.pid,
          startTime: self.startTime,
          proof: keeperProof(options.key, "keeper", request.nonce),
          nonce: connection.nonce,
        });
        return;
      }
      if (request.type === "prove" && connection.nonce !== undefined) {
        if (!keeperProofHolds(options.key, "daemon", connection.nonce, request.proof)) {
          connection.socket.destroy();
          return;
        }
        connection.proven = true;
        connection.send({ type: "ready" });
        armIdleExit();
        return;
      }
      connection.socket.destroy();
      return;
    }
    switch (request.type) {
      case "spawn":
        void spawnKept(connection, request.id, request.spec);
        return;
      case "attach":
        attach(connection, request.id, request.from);
        return;
      case "ack":
        return;
      case "stop":
        stop(request.id, request.graceMs);
        return;
      case "release":
        release(request.id);
        return;
      case "list":
        connection.send({ type: "list", clis: [...kept.values()].map(describe) });
        return;
      case "shutdown":
        for (const each of kept.values()) stop(each.id, request.graceMs);
        void close(request.graceMs + 2_000);
        return;
      default:
        connection.send({ type: "error", message: `${request.type} is said once, first` });
    }
  }

  async function spawnKept(connection: Connection, id: string, spec: KeptCliSpec): Promise<void> {
    if (kept.has(id)) {
      connection.send({ type: "error", id, message: `${id} is kept already` });
      return;
    }
    const spool = join(options.spoolDir, `${id}.out`);
    let child: Awaited<ReturnType<typeof startChild>>;
    try {
      child = await startChild({
        command: spec.command,
        args: spec.args,
        cwd: spec.cwd,
        env: spec.env,
        ...(spec.nice !== undefined && { nice: spec.nice }),
      });
    } catch (error) {
      connection.send({ type: "failed", id, message: (error as Error).message });
      return;
    }
    if (child.startTime === undefined) {
      connection.send({
        type: "failed",
        id,
        message: `pid ${child.pid} was gone before its start time was read`,
      });
      return;
    }
    const entry: Kept = {
      id,
      pid: child.pid,
      startTime: child.startTime,
      spool,
      fd: openSync(spool, "w", 0o600),
      end: 0,
      openLine: 0,
      stderrTail: "",
    };
    kept.set(id, entry);
    armIdleExit();
    connection.send({ type: "spawned", id, pid: entry.pid, startTime: entry.startTime });
    child.stdout.on("data", (chunk: Buffer) => {
      writeSync(entry.fd, chunk);
      entry.end += chunk.length;
      const newline = chunk.lastIndexOf(0x0a);
      entry.openLine = newline === -1 ? entry.openLine + chunk.length : chunk.length - newline - 1;
      if (entry.openLine > maxLineBytes && entry.overflow === undefined) {
        entry.overflow = entry.end - entry.openLine;
        signalProcessGroup(entry.pid, "SIGKILL");
      }
      if (entry.reader) pump(entry, entry.reader);
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      entry.stderrTail = (entry.stderrTail + text).slice(-stderrTailBytes);
    });
    child.stdin.on("error", () => {});
    child.stdin.end(spec.stdin);
    const stdoutClosed = new Promise<void>((resolve) => child.stdout.once("close", () => resolve()));
    const status = await child.exit;
    // Before the exit is told: a turn's end means nothing it started still runs (a helper holding
    // stdout open would also hold the close back).
    await endSession({ pid: entry.pid, startTime: entry.startTime });
    await stdoutClosed;
    entry.exit = { code: status.code, signal: status.signal };
    if (entry.reader) pump(entry, entry.reader);
    armIdleExit();
  }

  function attach(connection: Connection, id: string, from: number): void {
    const entry = kept.get(id);
    if (!entry) {
      connection.send({ type: "error", id, message: `${id} is not kept here` });
      return;
    }
    if (from > entry.end) {
      connection.send({ type: "error", id, message: `${id} has ${entry.end} bytes, not ${from}` });
      return;
    }
    entry.reader = {
      connection,
      position: from,
      lineStart: from,
      pending: [],
      exitSent: false,
      overflowSent: false,
    };
    pump(entry, entry.reader);
  }

  /** Sends the reader every whole line of the spool past its position, then the exit once all is sent. */
  function pump(entry: Kept, reader: Reader): void {
    const chunk = Buffer.alloc(64 * 1024);
    while (reader.position < entry.end) {
      const read = readSync(
        openSpool(entry),
        chunk,
        0,
        Math.min(chunk.length, entry.end - reader.position),
        reader.position,
      );
      if (read <= 0) break;
      let start = 0;
      for (
        let newline = chunk.indexOf(0x0a, 0);
        newline !== -1 && newline < read;
        newline = chunk.indexOf(0x0a, start)
      ) {
        reader.pending.push(Buffer.from(chunk.subarray(start, newline)));
        const text = Buffer.concat(reader.pending).toString("utf8").replace(/\r$/, "");
        const next = reader.position + newline + 1;
        if (text !== "" && (entry.overflow === undefined || reader.lineStart < entry.overflow))
          reader.connection.send({ type: "line", id: entry.id, offset: reader.lineStart, next, text });
        reader.pending = [];
        reader.lineStart = next;
        start = newline + 1;
      }
      if (start < read) reader.pending.push(Buffer.from(chunk.subarray(start, read)));
      reader.position += read;
    }
    if (entry.overflow !== undefined && !reader.overflowSent && reader.position >= entry.overflow) {
      reader.overflowSent = true;
      reader.connection.send({ type: "overflow", id: entry.id, offset: entry.overflow, limit: maxLineBytes });
    }
    if (entry.exit && !reader.exitSent && reader.position >= entry.end) {
      reader.exitSent = true;
      const tail = Buffer.concat(reader.pending).toString("utf8").replace(/\r$/, "");
      if (tail !== "" && entry.overflow === undefined)
        reader.connection.send({
          type: "line",
          id: entry.id,
          offset: reader.lineStart,
          next: entry.end,
          text: tail,
        });
      reader.connection.send({
        type: "exited",
        id: entry.id,
        end: entry.end,
        code: entry.exit.code,
        signal: entry.exit.signal,
        stderrTail: entry.stderrTail,
      });
    }
  }

  const readers = new Map<string, number>();
  function openSpool(entry: Kept): number {
    let fd = readers.get(entry.id);
    if (fd === undefined) {
      fd = openSync(entry.spool, "r");
      readers.set(entry.id, fd);
    }
    return fd;
  }

  function stop(id: string, graceMs: number): void {
    const entry = kept.get(id);
    if (!entry || entry.exit) return;
    signalProcessGroup(entry.pid, "SIGTERM");
    const timer = setTimeout(() => {
      if (!entry.exit) signalProcessGroup(entry.pid, "SIGKILL");
    }, graceMs);
    timer.unref?.();
  }

  function release(id: string): void {
    const entry = kept.get(id);
    if (!entry) return;
    if (!entry.exit) signalProcessGroup(entry.pid, "SIGKILL");
    closeSync(entry.fd);
    const reader = readers.get(id);
    if (reader !== undefined) closeSync(reader);
    readers.delete(id);
    rmSync(entry.spool, { force: true });
    kept.delete(id);
    armIdleExit();
  }

  function describe(entry: Kept): KeptCli {
    return {
      id: entry.id,
      pid: entry.pid,
      startTime: entry.startTime,
      end: entry.end,
      ...(entry.exit && { exit: entry.exit }),
    };
  }

  async function close(waitMs = 0): Promise<void> {
    if (closing) return;
    closing = true;
    // No daemon may connect to a keeper that is ending: its name goes first, so the next daemon
    // starts a keeper of its own there (and this one never removes that one's socket).
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(options.socketPath, { force: true });
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    for (const id of [...kept.keys()]) release(id);
    for (const connection of connections) connection.socket.destroy();
    await stopped;
    (options.onClosed ?? (() => process.exit(0)))();
  }

  return { close: () => close() };
}

/**
 * A keeper that holds the socket's name keeps no CLI yet: any spool in its dir is a dead keeper's
 * (SIGKILLed, or the machine went down with the runtime dir kept), whose turns went through the
 * daemon's recovery. Removed, as the keeper would have once each turn ended: a spool holds whatever a
 * tool printed.
 */
function removeStaleSpools(spoolDir: string): void {
  let names: string[];
  try {
    names = readdirSync(spoolDir);
  } catch {
    return;
  }
  for (const name of names) rmSync(join(spoolDir, name), { force: true });
}
