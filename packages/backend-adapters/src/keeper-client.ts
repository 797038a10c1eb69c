import { spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  KeeperReply,
  type KeeperRequest,
  type KeptCli,
  type KeptCliSpec,
  keeperProtocolVersion,
} from "@bridgeworks/protocol";
import { keeperProof, keeperProofHolds, mintKeeperNonce } from "./keeper-proof.js";

/** What a daemon hears of one kept CLI it attached to, in order. */
export interface KeptCliSink {
  /** A line starting at `offset`; the next one starts at `next`. */
  line(offset: number, text: string, next: number): void;
  overflow(offset: number, limitBytes: number): void;
  exited(exit: { end: number; code: number | null; signal: string | null; stderrTail: string }): void;
}

/** A daemon's proven connection to its state dir's keeper. */
export interface KeeperClient {
  readonly pid: number;
  readonly startTime: string;
  spawn(id: string, spec: KeptCliSpec): Promise<{ pid: number; startTime: string }>;
  /** Streams the CLI's lines from `from` (a line's start), then its exit, to `sink`. */
  attach(id: string, from: number, sink: KeptCliSink): void;
  ack(id: string, offset: number): void;
  stop(id: string, graceMs: number): void;
  release(id: string): void;
  list(): Promise<KeptCli[]>;
  /** Ends every kept CLI and the keeper. */
  shutdown(graceMs: number): void;
  /** Called once when the connection ends (the keeper died, or `close`); returns how to stop listening. */
  onClose(listener: () => void): () => void;
  close(): void;
}

/** The keeper did not prove itself, speaks another version, or is not there. */
export class KeeperUnavailable extends Error {
  override readonly name = "KeeperUnavailable";
}

/** This package's compiled keeper: `<package>/dist/keeper-main.js`. */
export function defaultKeeperScriptPath(): string {
  return join(dirname(dirname(fileURLToPath(import.meta.url))), "dist", "keeper-main.js");
}

/**
 * Connects to the keeper at `socketPath` and proves both ways (each over the other's nonce, with the
 * state dir's keeper key): another user's process cannot be reached there (a 0600 socket in a 0700
 * dir), and one that took the name could not prove the key. Rejects with `KeeperUnavailable`.
 */
export function connectKeeper(socketPath: string, key: Buffer, timeoutMs = 5_000): Promise<KeeperClient> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(socketPath);
    const nonce = mintKeeperNonce();
    let buffer = "";
    let state: "hello" | "ready" | "open" = "hello";
    let identity: { pid: number; startTime: string } | undefined;
    const waiting = new Map<
      string,
      { resolve(value: { pid: number; startTime: string }): void; reject(error: Error): void }
    >();
    const sinks = new Map<string, KeptCliSink>();
    const lists: { resolve(clis: KeptCli[]): void; reject(error: Error): void }[] = [];
    const closeListeners: (() => void)[] = [];
    const timer = setTimeout(
      () => fail(new KeeperUnavailable("the keeper did not answer in time")),
      timeoutMs,
    );
    const send = (request: KeeperRequest) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(request)}\n`);
    };
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    };
    socket.setEncoding("utf8");
    socket.on("error", (error) =>
      fail(new KeeperUnavailable(`the keeper cannot be reached: ${error.message}`)),
    );
    socket.on("close", () => {
      for (const each of waiting.values()) each.reject(new KeeperUnavailable("the keeper went away"));
      waiting.clear();
      for (const each of lists.splice(0)) each.reject(new KeeperUnavailable("the keeper went away"));
      if (state === "open") for (const listener of closeListeners) listener();
    });
    socket.on("connect", () => send({ type: "hello", version: keeperProtocolVersion, nonce }));
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        const parsed = KeeperReply.safeParse(JSON.parse(line));
        if (!parsed.success)
          return fail(new KeeperUnavailable("the keeper said something out of its protocol"));
        onReply(parsed.data);
      }
    });

    function onReply(reply: KeeperReply): void {
      if (state === "hello") {
        if (reply.type !== "hello") {
          fail(new KeeperUnavailable("the keeper did not say hello"));
          return;
        }
        if (reply.version !== keeperProtocolVersion) {
          fail(
            new KeeperUnavailable(`the keeper speaks version ${reply.version}, not ${keeperProtocolVersion}`),
          );
          return;
        }
        if (!keeperProofHolds(key, "keeper", nonce, reply.proof)) {
          fail(new KeeperUnavailable("the process at the keeper's socket could not prove the keeper key"));
          return;
        }
        identity = { pid: reply.pid, startTime: reply.startTime };
        state = "ready";
        send({ type: "prove", proof: keeperProof(key, "daemon", reply.nonce) });
        return;
      }
      if (state === "ready") {
        if (reply.type !== "ready") {
          fail(new KeeperUnavailable("the keeper refused this daemon's proof"));
          return;
        }
        clearTimeout(timer);
        state = "open";
        resolve(client(identity!));
        return;
      }
      switch (reply.type) {
        case "spawned":
          waiting.get(reply.id)?.resolve({ pid: reply.pid, startTime: reply.startTime });
          waiting.delete(reply.id);
          return;
        case "failed":
          waiting.get(reply.id)?.reject(new Error(reply.message));
          waiting.delete(reply.id);
          return;
        case "line":
          sinks.get(reply.id)?.line(reply.offset, reply.text, reply.next);
          return;
        case "overflow":
          sinks.get(reply.id)?.overflow(reply.offset, reply.limit);
          return;
        case "exited": {
          const { end, code, signal, stderrTail } = reply;
          sinks.get(reply.id)?.exited({ end, code, signal, stderrTail });
          return;
        }
        case "list":
          lists.shift()?.resolve(reply.clis);
          return;
        case "error":
          if (reply.id !== undefined && waiting.has(reply.id)) {
            waiting.get(reply.id)!.reject(new Error(reply.message));
            waiting.delete(reply.id);
          }
          return;
        default:
      }
    }

    function client(self: { pid: number; startTime: string }): KeeperClient {
      return {
        pid: self.pid,
        startTime: self.startTime,
        spawn: (id, spec) =>
          new Promise((resolveSpawn, rejectSpawn) => {
            waiting.set(id, { resolve: resolveSpawn, reject: rejectSpawn });
            send({ type: "spawn", id, spec });
          }),
        attach(id, from, sink) {
          sinks.set(id, sink);
          send({ type: "attach", id, from });
        },
        ack: (id, offset) => send({ type: "ack", id, offset }),
        stop: (id, graceMs) => send({ type: "stop", id, graceMs }),
        release(id) {
          sinks.delete(id);
          send({ type: "release", id });
        },
        list: () =>
          new Promise((resolveList, rejectList) => {
            if (socket.destroyed) {
              rejectList(new KeeperUnavailable("the keeper went away"));
              return;
            }
            lists.push({ resolve: resolveList, reject: rejectList });
            send({ type: "list" });
          }),
        shutdown: (graceMs) => send({ type: "shutdown", graceMs }),
        onClose(listener) {
          closeListeners.push(listener);
          return () => {
            const at = closeListeners.indexOf(listener);
            if (at !== -1) closeListeners.splice(at, 1);
          };
        },
        close: () => socket.end(),
      };
    }
  });
}

export interface KeeperProcessOptions {
  socketPath: string;
  key: Buffer;
  spoolDir: string;
  /** The keeper's script; default `defaultKeeperScriptPath()`. */
  script?: string;
  execPath?: string;
  idleExitMs?: number;
  /**
   * Told why a keeper found at the socket was not used (another protocol version, another key, no
   * answer) before a new one takes its place: its CLIs go through the caller's recovery.
   */
  onPassedOver?: (reason: string) => void;
}

/**
 * The state dir's keeper: the one already running there (proven), else a new one, started in its own
 * session so that nothing sent to the daemon's process group (a Ctrl-C, a service manager's stop of
 * the daemon alone) reaches it or its CLIs.
 */
export async function openKeeper(options: KeeperProcessOptions): Promise<KeeperClient> {
  try {
    return await connectKeeper(options.socketPath, options.key);
  } catch (error) {
    if (!(error instanceof KeeperUnavailable)) throw error;
    if (existsSync(options.socketPath)) options.onPassedOver?.(error.message);
  }
  // Nothing that proves the key answers there: a dead keeper's socket, or none.
  rmSync(options.socketPath, { force: true });
  await startKeeperProcess(options);
  return connectKeeper(options.socketPath, options.key);
}

function startKeeperProcess(options: KeeperProcessOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(options.execPath ?? process.execPath, [options.script ?? defaultKeeperScriptPath()], {
      detached: true,
      stdio: ["pipe", "pipe", "ignore"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    let output = "";
    child.once("error", reject);
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      if (!output.includes("\n")) return;
      child.stdout?.destroy();
      child.stdin?.destroy();
      child.unref();
      if (output.startsWith("ready")) resolve();
      else reject(new Error(`the keeper did not start: ${output.trim()}`));
    });
    child.once("exit", (code) => reject(new Error(`the keeper exited at once (code ${code})`)));
    const settings = {
      socketPath: options.socketPath,
      key: options.key.toString("base64url"),
      spoolDir: options.spoolDir,
      ...(options.idleExitMs !== undefined && { idleExitMs: options.idleExitMs }),
    };
    child.stdin?.end(`${JSON.stringify(settings)}\n`);
  });
}
