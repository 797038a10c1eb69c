import type { Server as HttpServer } from "node:http";
import type { Server as NetServer, Socket } from "node:net";

/**
 * How many connections a listener holds and for how long one may sit idle. Idle means nothing is in
 * progress on it: before its first request (HTTP) or its authentication (a token line), and between
 * requests. A connection at work (a request being answered, an SSE stream, an authenticated MCP
 * session) is never idle, however long it stays quiet.
 */
export interface ConnectionLimits {
  /** Open connections at most; one more is closed as soon as it is accepted, before a byte is read. */
  maxConnections: number;
  /**
   * Idle connections at most, below `maxConnections`: a new connection beyond it closes the oldest idle
   * one. A flood of silent connections so never holds more than this many, and never keeps a client
   * that speaks at once from being served.
   */
  maxIdleConnections: number;
  /** How long a connection may stay idle before it is closed. */
  idleTimeoutMs: number;
}

/** HTTP adds node's own bounds on reading a request (answered 408 when exceeded). */
export interface HttpConnectionLimits extends ConnectionLimits {
  /** How long the request's headers may take to arrive. */
  headersTimeoutMs: number;
  /** How long the whole request, body included, may take to arrive; at least `headersTimeoutMs`. */
  requestTimeoutMs: number;
}

export type IdleCloseReason = "idle-timeout" | "evicted";

export interface ConnectionLimiter {
  /** The connection has work in progress: not idle until as many `release` calls. */
  engage(socket: Socket): void;
  /** One piece of work ended; with none left the connection is idle again and its clock restarts. */
  release(socket: Socket): void;
  /** Connections open and, of those, idle. */
  counts(): { open: number; idle: number };
}

export interface LimitConnectionsOptions {
  /** Called just before an idle connection is closed, e.g. to log why. */
  onIdleClose?: (socket: Socket, reason: IdleCloseReason) => void;
}

interface ConnectionState {
  engaged: number;
  timer?: NodeJS.Timeout;
}

/**
 * Puts `limits` on a listener (a `net.Server`, or an `http.Server` through `limitHttpConnections`).
 * Call it before the server listens. The owner marks a connection's work with `engage`/`release`;
 * a connection that never gets any is closed after `idleTimeoutMs`.
 */
export function limitConnections(
  server: NetServer,
  limits: ConnectionLimits,
  options: LimitConnectionsOptions = {},
): ConnectionLimiter {
  assertLimits(limits);
  // node closes a connection beyond this right after accepting it, without making a socket of it.
  server.maxConnections = limits.maxConnections;
  const open = new Map<Socket, ConnectionState>();
  // Insertion order is idle-since order: the first is the oldest.
  const idle = new Set<Socket>();

  const close = (socket: Socket, reason: IdleCloseReason) => {
    forgetIdle(socket);
    // Counted out now: its descriptor goes with the destroy, its close event comes a tick later.
    open.delete(socket);
    try {
      options.onIdleClose?.(socket, reason);
    } finally {
      socket.destroy();
    }
  };
  const forgetIdle = (socket: Socket) => {
    const state = open.get(socket);
    if (state?.timer !== undefined) clearTimeout(state.timer);
    if (state !== undefined) state.timer = undefined;
    idle.delete(socket);
  };
  const becomeIdle = (socket: Socket, state: ConnectionState) => {
    state.timer = setTimeout(() => close(socket, "idle-timeout"), limits.idleTimeoutMs);
    state.timer.unref();
    idle.add(socket);
    while (idle.size > limits.maxIdleConnections) {
      const oldest = idle.values().next().value as Socket;
      close(oldest, "evicted");
    }
  };

  // Before the owner's own listener: the count and the clock start with the connection.
  server.prependListener("connection", (socket: Socket) => {
    const state: ConnectionState = { engaged: 0 };
    open.set(socket, state);
    socket.once("close", () => {
      forgetIdle(socket);
      open.delete(socket);
    });
    becomeIdle(socket, state);
  });

  return {
    engage(socket) {
      const state = open.get(socket);
      if (state === undefined) return;
      state.engaged += 1;
      forgetIdle(socket);
    },
    release(socket) {
      const state = open.get(socket);
      if (state === undefined || state.engaged === 0) return;
      state.engaged -= 1;
      if (state.engaged === 0 && !socket.destroyed) becomeIdle(socket, state);
    },
    counts: () => ({ open: open.size, idle: idle.size }),
  };
}

/**
 * `limitConnections` for an HTTP server: a connection is at work from a request's arrival (its headers
 * read) until its response has ended or failed, so an SSE stream is never idle. Also sets node's
 * headers and request timeouts, checked often enough to hold them within about a quarter of their length.
 */
export function limitHttpConnections(
  server: HttpServer,
  limits: HttpConnectionLimits,
  options: LimitConnectionsOptions = {},
): ConnectionLimiter {
  if (!(limits.headersTimeoutMs > 0 && limits.requestTimeoutMs >= limits.headersTimeoutMs)) {
    throw new RangeError(
      `headersTimeoutMs must be positive and requestTimeoutMs at least as long, got ${limits.headersTimeoutMs} and ${limits.requestTimeoutMs}`,
    );
  }
  const limiter = limitConnections(server, limits, options);
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  // node checks both only this often (30 s by default); read when the server starts listening. Node
  // 20's types lack the property, which exists since 18.
  (server as HttpServer & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(
    100,
    Math.min(30_000, Math.floor(limits.headersTimeoutMs / 4)),
  );
  server.prependListener("request", (request, response) => {
    const socket = request.socket;
    limiter.engage(socket);
    response.once("close", () => limiter.release(socket));
  });
  return limiter;
}

function assertLimits(limits: ConnectionLimits): void {
  const { maxConnections, maxIdleConnections, idleTimeoutMs } = limits;
  for (const [name, value] of Object.entries({ maxConnections, maxIdleConnections, idleTimeoutMs })) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`${name} must be a positive integer, got ${value}`);
    }
  }
  if (maxIdleConnections >= maxConnections) {
    throw new RangeError(
      `maxIdleConnections (${maxIdleConnections}) must be below maxConnections (${maxConnections}), so idle connections never take every slot`,
    );
  }
}
