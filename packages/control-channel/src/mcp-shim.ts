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
}

const shimName = "bridgeworks-mcp-shim";

/**
 * Connects to the bridge socket, sends `{"token": ...}` as the first line, then relays stdin -> socket
 * and socket -> stdout byte for byte. Ends (calls `exit` once) as soon as the socket is missing or
 * refused, as soon as it closes, or when stdin ends. Writes nothing to stdout but what the bridge sent.
 * Resolves with the exit code.
 */
export function runShim(options: ShimOptions): Promise<ShimExitCode> {
  const { socketPath, token, stdin, stdout } = options;
  const log = (message: string) => {
    options.stderr?.write(`${shimName}: ${message}\n`);
  };
  let resolveDone!: (code: ShimExitCode) => void;
  const done = new Promise<ShimExitCode>((resolve) => {
    resolveDone = resolve;
  });
  let finished = false;
  let socket: Socket | undefined;

  const onStdinData = (chunk: Buffer | string) => {
    if (socket === undefined || socket.write(chunk)) return;
    stdin.pause();
    socket.once("drain", () => stdin.resume());
  };
  const onStdinEnd = () => finish(ShimExitCode.clientClosed);
  const onStdoutError = () => finish(ShimExitCode.clientClosed);

  function finish(code: ShimExitCode): void {
    if (finished) return;
    finished = true;
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

  if (!socketPath || !token) {
    const missing = [!socketPath && shimSocketEnvVar, !token && shimTokenEnvVar].filter(Boolean).join(", ");
    log(`missing ${missing} in the environment`);
    finish(ShimExitCode.usage);
    return done;
  }

  let connected = false;
  const bridgeSocket = (options.connect ?? netConnect)(socketPath);
  socket = bridgeSocket;
  bridgeSocket.on("error", (error: NodeJS.ErrnoException) => {
    if (!connected) {
      log(`bridge socket ${socketPath} is unavailable (${error.code ?? error.message})`);
      finish(ShimExitCode.bridgeUnavailable);
    } else {
      log(`bridge socket error (${error.code ?? error.message})`);
      finish(ShimExitCode.bridgeClosed);
    }
  });
  bridgeSocket.on("close", () => {
    if (!connected) {
      log(`bridge socket ${socketPath} is unavailable (closed before connecting)`);
      finish(ShimExitCode.bridgeUnavailable);
    } else {
      log("bridge socket closed");
      finish(ShimExitCode.bridgeClosed);
    }
  });
  bridgeSocket.on("connect", () => {
    connected = true;
    bridgeSocket.write(`${JSON.stringify({ token })}\n`);
    bridgeSocket.on("data", (chunk: Buffer) => {
      if (stdout.write(chunk)) return;
      bridgeSocket.pause();
      stdout.once("drain", () => bridgeSocket.resume());
    });
    stdout.on("error", onStdoutError);
    stdin.on("data", onStdinData);
    stdin.on("end", onStdinEnd);
    stdin.on("close", onStdinEnd);
    stdin.on("error", onStdinEnd);
    stdin.resume();
  });
  return done;
}

/**
 * The shim as a process: configured only through its two variables. Claude Code merges its whole
 * environment into a stdio server's (API keys included); the shim needs none of it, so it drops it.
 */
export function shimMain(): void {
  const socketPath = process.env[shimSocketEnvVar];
  const tokenFile = process.env[shimTokenFileEnvVar];
  const token = tokenFile ? takeTokenFile(tokenFile) : process.env[shimTokenEnvVar];
  for (const name of Object.keys(process.env)) delete process.env[name];
  void runShim({
    socketPath,
    token,
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
