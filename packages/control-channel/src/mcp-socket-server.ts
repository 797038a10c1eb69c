import { chmod, lstat, unlink } from "node:fs/promises";
import { connect, createServer as createNetServer, type Socket } from "node:net";
import { isAbsolute, join } from "node:path";
import { describeError } from "@bridgeworks/runtime";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type ConnectionLimits, type IdleCloseReason, limitConnections } from "./connection-limits.js";
import { hasErrnoCode } from "./errno.js";
import { ensureRunDir } from "./run-dir.js";
import { requestChannelName, type SocketRequestHandler, serveSocketRequest } from "./socket-request.js";

/** The socket's name inside a generation dir. */
export const mcpSocketName = "mcp.sock";
/** How long a connection may take to send its token line. */
export const defaultHelloTimeoutMs = 5_000;
/** The token line is `{"token":"<64 hex>"}`; anything much longer is not one. */
export const maxHelloBytes = 1_024;
/**
 * Idle only until the token line: an authorized session stays however quiet (a tool call may wait an
 * hour on a person). A running turn holds one, its gate hook one more per tool call for a moment.
 */
export const defaultMcpConnectionLimits: Omit<ConnectionLimits, "idleTimeoutMs"> = {
  maxConnections: 1_024,
  maxIdleConnections: 64,
};

/**
 * The longest socket path `bind(2)` takes, in bytes: `sun_path` is 108 bytes on Linux and 104 on the
 * BSDs and macOS, both counting the terminating NUL. Longer paths would be truncated silently by some
 * runtimes, so they are refused instead.
 */
export const maxSocketPathBytes = process.platform === "linux" ? 107 : 103;

export type McpMountErrorCode =
  | "invalid_generation"
  | "relative_path"
  | "socket_path_too_long"
  | "socket_in_use"
  | "not_a_socket"
  | "invalid_token"
  | "invalid_shim_command"
  | "invalid_server_name";

export class McpMountError extends Error {
  override readonly name = "McpMountError";
  constructor(
    readonly code: McpMountErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** What `createServer` must return: an SDK `McpServer` or low-level `Server` (both qualify). */
export interface McpServerLike {
  connect(transport: Transport): Promise<void>;
  close(): Promise<void>;
}

/** Structured events for the owner's log. None carries a token. */
export type McpSocketEvent =
  | { type: "connected"; generation: number }
  | { type: "disconnected"; generation: number }
  | { type: "refused"; generation: number; reason: McpRefusalReason }
  | { type: "error"; generation: number; message: string };

export type McpRefusalReason =
  | "unauthorized"
  | "malformed-hello"
  | "hello-too-long"
  | "hello-timeout"
  | "evicted"
  | "closing"
  | "server-failed"
  | "no-request-channel";

const idleRefusals = { "idle-timeout": "hello-timeout", evicted: "evicted" } as const satisfies Record<
  IdleCloseReason,
  McpRefusalReason
>;

/** What a connection asks for after its token line: MCP, or one request (see `sendSocketRequest`). */
export type SocketChannel = "mcp" | "request";

export interface McpSocketServerOptions<Context> {
  /** The generation's own dir, e.g. `<state>/bridges/g<gen>` (see `bridgeGenerationDir`); made 0700. */
  dir: string;
  generation: number;
  /**
   * Called per authorized connection with what `authorize` returned for its token. It may resolve
   * later, e.g. after a dynamic `import()` of the MCP SDK, so an owner that never serves MCP never loads
   * it; the connection stays paused (its bytes kept) until then.
   */
  createServer: (context: Context) => McpServerLike | Promise<McpServerLike>;
  /**
   * Maps a token to its turn; `undefined` refuses it. Compare in constant time (see `TurnTokenRegistry`).
   * `channel` says what the connection asks for (`"mcp"`, or `"request"` for the one-shot channel), so
   * a token can be good for one only: a gate hook's token, which every tool inherits, need not open MCP.
   */
  authorize: (token: string, channel: SocketChannel) => Context | undefined;
  /** How long a connection may take to send its token line: the socket's idle timeout. */
  helloTimeoutMs?: number;
  /**
   * Connections at most, and how many may wait for their token line at once (a new one beyond that
   * closes the oldest waiting, `evicted`). Default `defaultMcpConnectionLimits`.
   */
  connectionLimits?: Omit<ConnectionLimits, "idleTimeoutMs">;
  /**
   * Answers a one-shot request (a token line naming `"channel": "request"`, then one JSON line; see
   * `sendSocketRequest`) with the context `authorize` gave its token. Without it such a connection is
   * refused.
   */
  handleRequest?: SocketRequestHandler<Context>;
  onEvent?: (event: McpSocketEvent) => void;
}

export interface McpSocketServer<Context> {
  readonly generation: number;
  readonly dir: string;
  readonly socketPath: string;
  /** Authorized connections currently open. */
  connectionCount(): number;
  /** Every connection open and, of those, the ones still waiting for their token line. */
  connectionCounts(): { open: number; idle: number };
  /** Ends the connections authorized with `context` (e.g. a cancelled turn); returns how many. */
  closeConnectionsOf(context: Context): number;
  /** The MCP connections authorized with `context` and open (not the request channel's). */
  mcpConnectionsOf(context: Context): number;
  /**
   * Stops listening, removes the socket file and destroys every connection at once: each MCP server's
   * in-flight handlers are aborted and each shim exits, so the CLI sees its call fail. Idempotent.
   */
  close(): Promise<void>;
}

export function assertGeneration(generation: number): void {
  if (!Number.isSafeInteger(generation) || generation < 1) {
    throw new McpMountError(
      "invalid_generation",
      `generation must be a positive integer, got ${JSON.stringify(generation)}`,
    );
  }
}

/** Refuses a relative socket path or one longer than `sun_path` takes, naming the limit. */
export function assertSocketPath(socketPath: string): void {
  if (!isAbsolute(socketPath)) {
    throw new McpMountError(
      "relative_path",
      `MCP socket path must be absolute, got ${JSON.stringify(socketPath)}`,
    );
  }
  const bytes = Buffer.byteLength(socketPath);
  if (bytes > maxSocketPathBytes) {
    throw new McpMountError(
      "socket_path_too_long",
      `MCP socket path ${socketPath} is ${bytes} bytes; a unix socket path may have at most ` +
        `${maxSocketPathBytes} bytes here; use a shorter state dir`,
    );
  }
}

/**
 * Serves MCP on `<dir>/mcp.sock` for one bridge generation. Each connection must first send one line
 * `{"token":"..."}`; `authorize` maps it to a turn context or refuses it, and a refused (or silent, or
 * malformed) connection is closed without a byte of MCP. After the token line the connection speaks
 * newline-delimited JSON-RPC to the server `createServer(context)` returns.
 */
export async function startMcpSocketServer<Context>(
  options: McpSocketServerOptions<Context>,
): Promise<McpSocketServer<Context>> {
  const { dir, generation } = options;
  assertGeneration(generation);
  const socketPath = join(dir, mcpSocketName);
  // Checked before anything is created: a refusal leaves nothing behind.
  assertSocketPath(socketPath);
  const helloTimeoutMs = options.helloTimeoutMs ?? defaultHelloTimeoutMs;
  const emit = (event: McpSocketEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // A logger must not break the server.
    }
  };

  await ensureRunDir(dir);
  await clearStaleSocket(socketPath);

  interface Connection {
    socket: Socket;
    context?: Context;
    /** Authorized for MCP (not the request channel). */
    mcp?: boolean;
    server?: McpServerLike;
  }
  const connections = new Set<Connection>();
  let closing = false;

  const netServer = createNetServer({ pauseOnConnect: true }, (socket) => {
    const connection: Connection = { socket };
    connections.add(connection);
    socket.on("error", (error) => emit({ type: "error", generation, message: error.message }));
    socket.once("close", () => {
      connections.delete(connection);
      if (connection.server !== undefined) {
        emit({ type: "disconnected", generation });
        void connection.server.close().catch(() => {});
      }
    });
    if (closing) {
      refuse(connection, "closing");
      return;
    }
    awaitHello(connection);
  });

  // Idle means waiting for the token line: the hello timeout is the idle timeout.
  const limiter = limitConnections(
    netServer,
    { ...(options.connectionLimits ?? defaultMcpConnectionLimits), idleTimeoutMs: helloTimeoutMs },
    { onIdleClose: (_, reason) => emit({ type: "refused", generation, reason: idleRefusals[reason] }) },
  );

  function refuse(connection: Connection, reason: McpRefusalReason): void {
    emit({ type: "refused", generation, reason });
    connection.socket.destroy();
  }

  function awaitHello(connection: Connection): void {
    const { socket } = connection;
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const newline = buffered.indexOf(0x0a);
      if (newline === -1) {
        if (buffered.length > maxHelloBytes) {
          socket.off("data", onData);
          refuse(connection, "hello-too-long");
        }
        return;
      }
      // No longer idle, and never again: what follows is authorized, or the connection is closed.
      limiter.engage(socket);
      socket.off("data", onData);
      socket.pause();
      if (newline > maxHelloBytes) {
        refuse(connection, "hello-too-long");
        return;
      }
      const hello = parseHello(buffered.subarray(0, newline));
      if (hello === undefined) {
        refuse(connection, "malformed-hello");
        return;
      }
      const { token } = hello;
      let context: Context | undefined;
      try {
        context = options.authorize(token, hello.channel === requestChannelName ? "request" : "mcp");
      } catch (error) {
        emit({ type: "error", generation, message: `authorize threw: ${describeError(error)}` });
        context = undefined;
      }
      if (context === undefined) {
        refuse(connection, "unauthorized");
        return;
      }
      if (hello.channel === requestChannelName) {
        answerRequest(connection, context, buffered.subarray(newline + 1));
        return;
      }
      serve(connection, context, buffered.subarray(newline + 1));
    };
    socket.on("data", onData);
    socket.resume();
  }

  function answerRequest(connection: Connection, context: Context, initialData: Buffer): void {
    const handler = options.handleRequest;
    if (handler === undefined || closing) {
      refuse(connection, handler === undefined ? "no-request-channel" : "closing");
      return;
    }
    connection.context = context;
    serveSocketRequest(connection.socket, {
      context,
      initialData,
      handler,
      timeoutMs: helloTimeoutMs,
      onError: (message) => emit({ type: "error", generation, message: `request: ${message}` }),
    });
  }

  function serve(connection: Connection, context: Context, initialData: Buffer): void {
    const { socket } = connection;
    if (closing || socket.destroyed) {
      refuse(connection, "closing");
      return;
    }
    connection.context = context;
    connection.mcp = true;
    void (async () => {
      let server: McpServerLike;
      let transport: Transport;
      try {
        // The transport (and with it the SDK) is loaded by the first connection, not at start.
        const [created, { SocketTransport }] = await Promise.all([
          options.createServer(context),
          import("./mcp-socket-transport.js"),
        ]);
        server = created;
        transport = new SocketTransport(socket, { initialData });
      } catch (error) {
        emit({ type: "error", generation, message: `createServer threw: ${describeError(error)}` });
        refuse(connection, "server-failed");
        return;
      }
      if (closing || socket.destroyed) {
        // Gone while the server was being made: nothing will close it but us.
        void server.close().catch(() => {});
        if (!socket.destroyed) refuse(connection, "closing");
        return;
      }
      connection.server = server;
      server.connect(transport).then(
        () => emit({ type: "connected", generation }),
        (error: unknown) => {
          emit({ type: "error", generation, message: `connect failed: ${describeError(error)}` });
          socket.destroy();
        },
      );
    })();
  }

  await new Promise<void>((resolve, reject) => {
    netServer.once("error", reject);
    netServer.listen(socketPath, () => {
      netServer.off("error", reject);
      resolve();
    });
  });
  netServer.on("error", (error) => emit({ type: "error", generation, message: error.message }));
  try {
    // The 0700 dir already keeps other users out; the socket's own mode says the same.
    await chmod(socketPath, 0o600);
  } catch (error) {
    netServer.close();
    throw error;
  }

  let closed: Promise<void> | undefined;
  return {
    generation,
    dir,
    socketPath,
    connectionCount: () => [...connections].filter((connection) => connection.server !== undefined).length,
    connectionCounts: () => limiter.counts(),
    closeConnectionsOf(context) {
      let count = 0;
      for (const connection of connections) {
        if (connection.context === undefined || connection.context !== context) continue;
        connection.socket.destroy();
        count += 1;
      }
      return count;
    },
    mcpConnectionsOf(context) {
      let count = 0;
      for (const connection of connections) if (connection.mcp && connection.context === context) count += 1;
      return count;
    },
    close() {
      if (closed !== undefined) return closed;
      closing = true;
      closed = (async () => {
        const stopped = new Promise<void>((resolve) => netServer.close(() => resolve()));
        const servers: McpServerLike[] = [];
        for (const connection of connections) {
          if (connection.server !== undefined) servers.push(connection.server);
          connection.socket.destroy();
        }
        await Promise.all(servers.map((server) => server.close().catch(() => {})));
        await stopped;
        await unlink(socketPath).catch((error: unknown) => {
          if (!hasErrnoCode(error, "ENOENT")) throw error;
        });
      })();
      return closed;
    },
  };
}

function parseHello(line: Buffer): { token: string; channel: string | undefined } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { token, channel } = value as { token?: unknown; channel?: unknown };
  if (typeof token !== "string" || token.length === 0) return undefined;
  if (channel !== undefined && channel !== requestChannelName) return undefined;
  return { token, channel };
}

/**
 * A socket file left at `socketPath` by a dead server is removed; one something still listens on is
 * refused, and so is anything that is not a socket.
 */
async function clearStaleSocket(socketPath: string): Promise<void> {
  const stats = await lstat(socketPath).catch((error: unknown) => {
    if (hasErrnoCode(error, "ENOENT")) return undefined;
    throw error;
  });
  if (stats === undefined) return;
  if (!stats.isSocket()) {
    throw new McpMountError(
      "not_a_socket",
      `${socketPath} exists and is not a socket; refusing to replace it`,
    );
  }
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(socketPath);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
  if (live) {
    throw new McpMountError("socket_in_use", `${socketPath} is in use by a running server`);
  }
  await unlink(socketPath).catch((error: unknown) => {
    if (!hasErrnoCode(error, "ENOENT")) throw error;
  });
}
