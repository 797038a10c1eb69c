import { type ChildProcess, fork } from "node:child_process";
import { dirname, join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { CliSpawnReply, type CliSpawnRequest, type CliStdioStream } from "@bridgeworks/protocol";
import { type CliExitStatus, type CliSpawner, CliSpawnFailure, type SpawnedCli } from "./cli-spawner.js";

/** This package's compiled spawner: `<package>/dist/spawner-main.js` (see `runCliSpawner`). */
export function defaultSpawnerScriptPath(): string {
  return join(dirname(dirname(fileURLToPath(import.meta.url))), "dist", "spawner-main.js");
}

export interface SpawnerProcessOptions {
  /** The spawner's script; default `defaultSpawnerScriptPath()`. */
  script?: string;
  /** The node that runs it; default this process's. */
  execPath?: string;
  /** Told when a helper exits while the spawner is open (it is started again on the next spawn). */
  onUnexpectedExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
}

export interface SpawnerProcess extends CliSpawner {
  /** The helper's pid while one runs. */
  readonly pid: number | undefined;
  /** Starts the helper ahead of the first spawn (which otherwise starts it). */
  start(): void;
  /** Ends the helper (it exits when its channel closes); the CLIs it started run on. */
  close(): void;
}

interface PendingSpawn {
  resolve(spawned: SpawnedCli): void;
  reject(error: Error): void;
  stdio: Partial<Record<CliStdioStream, Readable & Writable>>;
}

/**
 * CLIs started by a small helper process, so the fork and the wait for exec block the helper's event
 * loop, not the caller's: the caller sends one message and gets the pipes back as handles. The helper
 * is started by `start()` or the first spawn, and again on the next spawn if it died; a CLI whose
 * helper died still has its pipes, and its exit reads `statusLost`.
 */
export function startSpawnerProcess(options: SpawnerProcessOptions = {}): SpawnerProcess {
  const script = options.script ?? defaultSpawnerScriptPath();
  const pending = new Map<number, PendingSpawn>();
  const exits = new Map<number, (status: CliExitStatus) => void>();
  let helper: ChildProcess | undefined;
  let nextId = 1;
  let closed = false;

  function onMessage(from: ChildProcess, raw: unknown, handle: unknown): void {
    const parsed = CliSpawnReply.safeParse(raw);
    if (!parsed.success) {
      // Not the spawner this package builds: nothing it says can be trusted, so it ends like a crash.
      from.kill("SIGKILL");
      return;
    }
    const message = parsed.data;
    if (message.type === "exited") {
      exits.get(message.id)?.({ code: message.code, signal: message.signal as NodeJS.Signals | null });
      exits.delete(message.id);
      holdWhileAwaited(from);
      return;
    }
    const spawn = pending.get(message.id);
    if (!spawn) return;
    if (message.type === "stdio") {
      spawn.stdio[message.stream] = handle as Readable & Writable;
      return;
    }
    settle(from, message.id);
    if (message.type === "failed") {
      spawn.reject(new CliSpawnFailure(message.message));
      return;
    }
    const { stdin, stdout, stderr } = spawn.stdio;
    if (!stdin || !stdout || !stderr) {
      spawn.reject(new Error(`the CLI spawner started pid ${message.pid} without its pipes`));
      return;
    }
    stdin.on("error", () => {});
    const exit = new Promise<CliExitStatus>((resolve) => exits.set(message.id, resolve));
    holdWhileAwaited(from);
    spawn.resolve({ pid: message.pid, startTime: message.startTime, stdin, stdout, stderr, exit });
  }

  function startHelper(): ChildProcess {
    const child = fork(script, [], {
      execPath: options.execPath ?? process.execPath,
      execArgv: [],
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      serialization: "json",
    });
    child.on("message", (raw, handle) => onMessage(child, raw, handle));
    child.on("error", () => {});
    // `close`, not `exit`: it comes after the last message of the channel, so a CLI the helper
    // reported started is never counted as not started.
    child.on("close", (code, signal) => {
      if (helper === child) helper = undefined;
      if (!closed) options.onUnexpectedExit?.(code, signal);
      for (const spawn of pending.values()) {
        for (const pipe of Object.values(spawn.stdio)) pipe.destroy();
        spawn.reject(new CliSpawnFailure("the CLI spawner exited"));
      }
      pending.clear();
      for (const resolve of exits.values()) resolve({ code: null, signal: null, statusLost: true });
      exits.clear();
    });
    // The helper never keeps the caller running; its channel only while an answer is awaited.
    child.unref();
    child.channel?.unref();
    return child;
  }

  /** Refs the channel while a spawn or a started CLI's exit waits for the helper's word. */
  function holdWhileAwaited(from: ChildProcess): void {
    if (pending.size + exits.size > 0) from.channel?.ref();
    else from.channel?.unref();
  }

  function settle(from: ChildProcess, id: number): void {
    pending.delete(id);
    holdWhileAwaited(from);
  }
  return {
    get pid() {
      return helper?.pid;
    },
    start() {
      if (!closed) helper ??= startHelper();
    },
    spawn(spec) {
      if (closed) return Promise.reject(new Error("the CLI spawner was closed"));
      helper ??= startHelper();
      const id = nextId++;
      const request: CliSpawnRequest = {
        type: "spawn",
        id,
        command: spec.command,
        args: [...spec.args],
        cwd: spec.cwd,
        env: spec.env,
        ...(spec.nice !== undefined && { nice: spec.nice }),
      };
      const sent = helper;
      return new Promise<SpawnedCli>((resolve, reject) => {
        pending.set(id, { resolve, reject, stdio: {} });
        holdWhileAwaited(sent);
        sent.send(request, (error) => {
          if (error === null || !pending.has(id)) return;
          settle(sent, id);
          reject(new CliSpawnFailure(`the CLI spawner could not be reached: ${error.message}`));
        });
      });
    },
    close() {
      closed = true;
      if (helper?.connected) helper.disconnect();
    },
  };
}
