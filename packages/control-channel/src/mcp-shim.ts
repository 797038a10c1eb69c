import { readFileSync, unlinkSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";

// This module is what `dist/shim.js` loads: it imports node builtins only, so the shim starts fast and
// no library can print to stdout, which is the MCP protocol.

/** The env var naming the bridge generation's socket. */
export const shimSocketEnvVar = "FLOOT_MCP_SOCKET";
/** The env var holding the per-turn token (never argv: every user can read argv with `ps`). */
export const shimTokenEnvVar = "FLOOT_MCP_TOKEN";
/**
 * The env var naming a 0600 file holding the token instead, which the shim removes once read: the CLI's
 * environment, which every command the agent runs inherits, then carries a path to nothing.
 */
export const shimTokenFileEnvVar = "FLOOT_MCP_TOKEN_FILE";

/** How the shim ends; the CLI only sees "the MCP server exited", the codes are for logs and tests. */
export const ShimExitCode = {
  /** stdin ended (or stdout broke): the CLI is done with us. */
  clientClosed: 0,
  /** The socket path or the token is missing from the environment. */
  usage: 64,
  /** The socket is missing, refused or otherwise unreachable: a stale or dead bridge generation. */
  bridgeUnavailable: 69,
  /** The bridge closed the socket (restart, shutdown, turn cancelled, token refused). */
  bridgeClosed: 74,
} as const;
export type ShimExitCode = (typeof ShimExitCode)[keyof typeof ShimExitCode];

/**
 * The env var naming the turn's rebind file: after a daemon restart, the daemon that adopted the turn
 * writes there (0600, in its private runtime dir) the new generation's socket and a fresh token, as
 * JSON `{"socket", "token"}`. The shim takes it (reads and removes it) and reconnects.
 */
export const shimRebindFileEnvVar = "FLOOT_MCP_REBIND_FILE";
/** How long a shim whose bridge closed waits for its rebind file, unless told otherwise. */
export const defaultShimRebindWaitMs = 60_000;

export interface ShimOptions {
  socketPath: string | undefined;
  token: string | undefined;
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  /** Diagnostics only; never the token. Defaults to discarding them. */
  stderr?: NodeJS.WritableStream;
  /** Called exactly once. The script passes `process.exit`. */
  exit: (code: ShimExitCode) => void;
  /** Injectable for tests; defaults to `net.connect(path)`. */
  connect?: (path: string) => Socket;
  /** Where a restarted daemon leaves new credentials (`shimRebindFileEnvVar`); unset: never rebinds. */
  rebindFile?: string;
  rebindWaitMs?: number;
  /** How often the rebind file is looked for (default 100 ms). */
  rebindPollMs?: number;
}

const shimName = "bridgeworks-mcp-shim";

/** The id of the `initialize` the shim replays on a new connection; its answer is not relayed. */
const replayedInitializeId = "bridgeworks-shim-rebind";

interface JsonRpcHead {
  id?: unknown;
  method?: unknown;
}

function headOf(line: string): JsonRpcHead | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === "object" ? (value as JsonRpcHead) : undefined;
  } catch {
    return undefined;
  }
}

/** Splits a byte stream into newline-ended lines (MCP's stdio framing), keeping the newline. */
function lineReader(onLine: (line: string) => void): (chunk: Buffer | string) => void {
  let partial = "";
  return (chunk) => {
    partial += chunk.toString();
    for (let at = partial.indexOf("\n"); at !== -1; at = partial.indexOf("\n")) {
      onLine(partial.slice(0, at + 1));
      partial = partial.slice(at + 1);
    }
  };
}

/**
 * Connects to the bridge socket, sends `{"token": ...}` as the first line, then relays stdin -> socket
 * and socket -> stdout line by line. When the bridge closes and a rebind file is configured, the shim
 * waits for it (a restarted daemon adopted the turn): it connects to the new socket with the new token,
 * replays the client's `initialize` and `notifications/initialized` (the new server's answer is not
 * relayed), then sends again every request the old bridge never answered, by the same id, so the
 * daemon decides each once and the CLI waits for no timeout; what the CLI writes meanwhile is held.
 * Ends (calls `exit` once) when the socket is missing, refused or closes and no rebind file is
 * configured (or none came in time: `bridgeClosed`), or when stdin ends. Writes nothing to stdout but what a bridge sent.
 */
export function runShim(options: ShimOptions): Promise<ShimExitCode> {
  const { stdin, stdout } = options;
  const log = (message: string) => {
    options.stderr?.write(`${shimName}: ${message}\n`);
  };
  let resolveDone!: (code: ShimExitCode) => void;
  const done = new Promise<ShimExitCode>((resolve) => {
    resolveDone = resolve;
  });
  let finished = false;
  let socket: Socket | undefined;
  /** Connected and past the token: lines go to the socket; otherwise they wait in `held`. */
  let open = false;
  const held: string[] = [];
  let initialize: string | undefined;
  let initialized: string | undefined;
  /** Requests sent to a bridge and not answered yet, by id, in the order sent. */
  const unanswered = new Map<string, string>();
  let rebindTimer: NodeJS.Timeout | undefined;

  const toBridge = (line: string) => {
    if (socket === undefined || !open) {
      held.push(line);
      return;
    }
    if (socket.write(line)) return;
    stdin.pause();
    socket.once("drain", () => stdin.resume());
  };
  const onClientLine = (line: string) => {
    const head = headOf(line);
    if (head?.method === "initialize") initialize = line;
    else if (head?.method === "notifications/initialized") initialized = line;
    if (head !== undefined && head.id !== undefined && typeof head.method === "string")
      unanswered.set(JSON.stringify(head.id), line);
    toBridge(line);
  };
  const onStdinData = lineReader(onClientLine);
  const onStdinEnd = () => finish(ShimExitCode.clientClosed);
  const onStdoutError = () => finish(ShimExitCode.clientClosed);

  function finish(code: ShimExitCode): void {
    if (finished) return;
    finished = true;
    clearTimeout(rebindTimer);
    stdin.off("data", onStdinData);
    stdin.off("end", onStdinEnd);
    stdin.off("close", onStdinEnd);
    stdin.off("error", onStdinEnd);
    stdin.pause();
    if (socket !== undefined) {
      socket.removeAllListeners("data");
      // Ending (not destroying) lets the bridge see an orderly EOF for an orderly exit.
      if (code === ShimExitCode.clientClosed) socket.end();
      else socket.destroy();
      socket.on("error", () => {});
    }
    options.exit(code);
    resolveDone(code);
  }

  if ((!options.socketPath || !options.token) && options.rebindFile === undefined) {
    const missing = [!options.socketPath && shimSocketEnvVar, !options.token && shimTokenEnvVar]
      .filter(Boolean)
      .join(", ");
    log(`missing ${missing} in the environment`);
    finish(ShimExitCode.usage);
    return done;
  }

  function connectTo(socketPath: string, token: string, rebinding: boolean): void {
    let connected = false;
    const bridgeSocket = (options.connect ?? netConnect)(socketPath);
    socket = bridgeSocket;
    const lost = (why: string) => {
      if (finished || socket !== bridgeSocket) return;
      open = false;
      // Unreachable at once: a stale generation, or a daemon restarting before its CLI's shim started
      // (then the daemon that adopts the turn writes the rebind file).
      if (!connected && !rebinding && options.rebindFile === undefined) {
        log(`bridge socket ${socketPath} is unavailable (${why})`);
        finish(ShimExitCode.bridgeUnavailable);
        return;
      }
      log(`bridge socket closed (${why})`);
      if (options.rebindFile === undefined) finish(ShimExitCode.bridgeClosed);
      else awaitRebind(options.rebindFile);
    };
    bridgeSocket.on("error", (error: NodeJS.ErrnoException) => lost(error.code ?? error.message));
    bridgeSocket.on("close", () => lost(connected ? "closed" : "closed before connecting"));
    bridgeSocket.on("connect", () => {
      connected = true;
      bridgeSocket.write(`${JSON.stringify({ token })}\n`);
      const onBridgeLine = (line: string) => {
        const head = headOf(line);
        if (head !== undefined && head.id !== undefined && head.method === undefined) {
          if (head.id === replayedInitializeId) return;
          unanswered.delete(JSON.stringify(head.id));
        }
        if (stdout.write(line)) return;
        bridgeSocket.pause();
        stdout.once("drain", () => bridgeSocket.resume());
      };
      bridgeSocket.on("data", lineReader(onBridgeLine));
      if (rebinding) {
        // The new server has seen nothing of this client: introduce it, then ask again what is open.
        const replay: string[] = [];
        // What is still held was never sent to any bridge: it goes with the held lines, once. An
        // initialize a bridge took and never answered (it died first) is asked again by its own id:
        // its answer is the client's, which waits for it still.
        if (initialize !== undefined && !held.includes(initialize)) {
          const message = JSON.parse(initialize) as Record<string, unknown>;
          if (unanswered.has(JSON.stringify(message.id))) replay.push(initialize);
          else replay.push(`${JSON.stringify({ ...message, id: replayedInitializeId })}\n`);
        }
        if (initialized !== undefined && !held.includes(initialized)) replay.push(initialized);
        for (const line of unanswered.values())
          if (headOf(line)?.method !== "initialize" && !held.includes(line)) replay.push(line);
        for (const line of replay) bridgeSocket.write(line);
      }
      open = true;
      for (const line of held.splice(0)) toBridge(line);
    });
  }

  let awaiting = false;
  function awaitRebind(path: string): void {
    // A socket's `error` and then its `close` both report the loss: one wait.
    if (awaiting) return;
    awaiting = true;
    const waitMs = options.rebindWaitMs ?? defaultShimRebindWaitMs;
    const pollMs = options.rebindPollMs ?? 100;
    const deadline = Date.now() + waitMs;
    const poll = () => {
      if (finished) return;
      const credentials = takeRebindFile(path);
      if (credentials !== undefined) {
        log("rebinding to a restarted daemon");
        awaiting = false;
        connectTo(credentials.socket, credentials.token, true);
        return;
      }
      if (Date.now() >= deadline) {
        log(`no daemon rebound this turn within ${waitMs} ms`);
        finish(ShimExitCode.bridgeClosed);
        return;
      }
      rebindTimer = setTimeout(poll, pollMs);
    };
    poll();
  }

  stdout.on("error", onStdoutError);
  stdin.on("data", onStdinData);
  stdin.on("end", onStdinEnd);
  stdin.on("close", onStdinEnd);
  stdin.on("error", onStdinEnd);
  if (options.socketPath && options.token) connectTo(options.socketPath, options.token, false);
  // Its token file is gone (the daemon restarted before the CLI started the shim, removing its
  // generation): the daemon that adopts the turn leaves a new one.
  else awaitRebind(options.rebindFile!);
  return done;
}

/** A turn's new socket and token, left by the daemon that adopted it after a restart. */
export interface RebindCredentials {
  socket: string;
  token: string;
}

/** A rebind file's text (`{"socket", "token"}`); undefined when it is not one. */
export function parseRebind(text: string | undefined): RebindCredentials | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as { socket?: unknown; token?: unknown };
    if (typeof value.socket === "string" && typeof value.token === "string")
      return { socket: value.socket, token: value.token };
  } catch {
    // Not one (or half-written: the daemon writes it atomically, so not ours).
  }
  return undefined;
}

/** Reads a rebind file and removes it (its token opens one connection); undefined when absent. */
export function takeRebindFile(path: string): RebindCredentials | undefined {
  return parseRebind(takeTokenFile(path));
}

/**
 * The shim as a process: configured only through its two variables. Claude Code merges its whole
 * environment into a stdio server's (API keys included); the shim needs none of it, so it drops it.
 */
export function shimMain(): void {
  const socketPath = process.env[shimSocketEnvVar];
  const tokenFile = process.env[shimTokenFileEnvVar];
  const token = tokenFile ? takeTokenFile(tokenFile) : process.env[shimTokenEnvVar];
  const rebindFile = process.env[shimRebindFileEnvVar];
  for (const name of Object.keys(process.env)) delete process.env[name];
  void runShim({
    socketPath,
    token,
    ...(rebindFile && { rebindFile }),
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    exit: (code) => process.exit(code),
  });
}

/** Reads the token file and removes it, so nothing started later can read it; undefined when gone. */
export function takeTokenFile(path: string): string | undefined {
  try {
    const token = readFileSync(path, "utf8").trim();
    unlinkSync(path);
    return token || undefined;
  } catch {
    return undefined;
  }
}
