import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type HttpConnectionLimits, limitHttpConnections } from "@bridgeworks/control-channel";
import type { FlootBackendStatus, FlootDaemonStatus } from "@bridgeworks/protocol";
import { describeError, type Logger, sendJson } from "@bridgeworks/runtime";
import type { TurnJournal } from "@bridgeworks/turn-journal";
import type { MomentSource } from "../moments.js";
import type { PermissionBroker } from "../permission-broker.js";
import type { SandboxStatus } from "../sandbox-status.js";
import type { SecretBroker } from "../secret-broker.js";
import type { SessionStore } from "../session-store.js";
import type { TurnCoordinator } from "../turn-coordinator.js";
import type { UiAuth } from "../ui-auth.js";
import { ApiError, notAllowed, sendError } from "./api-error.js";
import { listenOnSocket } from "./api-socket.js";
import { defaultApiConnectionLimits } from "./connection-policy.js";
import type { DecisionActors } from "./decision-actor.js";
import { type Caller, createGuards } from "./guards.js";
import { type LoopbackV6, listenLoopbackV6 } from "./loopback-v6.js";
import { decodePathPart } from "./path-decoding.js";
import { permissionRoutes } from "./permission-routes.js";
import { apiRoutes, type Route } from "./routes.js";
import { searchRoutes } from "./search-routes.js";
import { SlicedQueue } from "./sliced-queue.js";
import { createUiPages } from "./ui-pages.js";

export interface ApiDeps {
  journal: TurnJournal;
  sessions: SessionStore;
  coordinator: TurnCoordinator;
  secrets: SecretBroker;
  permissions: PermissionBroker;
  /** Each backend CLI: installed, version, signed in (`GET /v1/backends`). */
  backends: () => Promise<FlootBackendStatus[]>;
  token: string;
  logger: Logger;
  status: () => FlootDaemonStatus;
  /** The web UI's sign-in codes, origin-bound tokens and identity proofs. */
  uiAuth: UiAuth;
  /** Static files of the web UI, served to a logged-in browser only; absent when not installed. */
  uiDir?: string;
  heartbeatMs?: number;
  /** The API's unix socket, for the CLI: authenticated by its file mode, it needs no token. */
  socketPath?: string;
  /** Who makes a decision; a process of a running turn is refused. */
  actorOf: DecisionActors;
  /** Whether each backend's sandbox can run here. */
  sandboxStatus: SandboxStatus;
  /** Each listener's, the TCP port's and the socket's; default `defaultApiConnectionLimits`. */
  connectionLimits?: HttpConnectionLimits;
  /** Approvals and secrets asked, turns ended: sent on `/v1/changes` as they happen. */
  moments?: MomentSource;
}

/**
 * The bulk work of requests (follower starts, the steps of a page of sessions, turn submissions) takes
 * up to this much of a turn of the loop before the reads that wait are served.
 */
const bulkSliceMs = 2;

export interface ApiServer {
  port: number;
  server: Server;
  /** The same port on `[::1]`, when this daemon holds it (else `localhost` is refused: `LoopbackV6`). */
  loopbackV6: LoopbackV6;
  socketServer?: Server;
  close(): Promise<void>;
}

/**
 * The daemon's HTTP server on 127.0.0.1, and on `[::1]` at the same port where it can hold it (else
 * `Host: localhost` is refused, saying why): every request passes the Host/Origin guard; `/v1` needs the
 * API token (or a web UI page's access token) and goes to the route table; `/ui/*` and everything
 * else is the web UI. With `anyPortIfTaken`, a taken `port` falls back to a free one. A taken `port`
 * revokes the browser tokens bound to it (a taken `[::1]` those of `localhost`); once bound, only the
 * tokens of the bound port are kept.
 * With `socketPath`, the same `/v1` routes are also served on that unix socket (the CLI's way in; no
 * web UI there), where the socket's file mode is the credential.
 */
export async function startApiServer(deps: ApiDeps, port = 0, anyPortIfTaken = false): Promise<ApiServer> {
  let boundPort = 0;
  let loopbackV6: LoopbackV6 = { held: false, code: "", why: "the daemon is starting" };
  const openStreams = new Set<ServerResponse>();
  const guards = createGuards({
    token: deps.token,
    uiAuth: deps.uiAuth,
    port: () => boundPort,
    localhostDown: () => (loopbackV6.held ? undefined : loopbackV6.why),
  });
  const ui = createUiPages({ uiAuth: deps.uiAuth, guards, uiDir: deps.uiDir });
  const slices = new SlicedQueue({
    sliceMs: bulkSliceMs,
    onError: (error) => deps.logger.error("a queued request step threw", { error: describeError(error) }),
  });
  const routes: Route[] = [
    ...apiRoutes({
      ...deps,
      status: () => ({ ...deps.status(), port: boundPort }),
      slices,
      follow: {
        journal: deps.journal,
        heartbeatMs: deps.heartbeatMs ?? 15_000,
        openStreams,
        frames: new WeakMap(),
        starts: slices,
        logger: deps.logger,
      },
    }),
    ...permissionRoutes(deps),
    ...searchRoutes(deps),
    {
      method: "GET",
      pattern: /^\/v1\/backends$/,
      handler: async (_q, r) => sendJson(r, 200, { backends: await deps.backends() }),
    },
  ];

  async function dispatch(
    request: IncomingMessage,
    response: ServerResponse,
    transport: "tcp" | "socket",
  ): Promise<void> {
    const path = new URL(request.url ?? "/", "http://x").pathname;
    if (transport === "tcp") {
      const refusal = guards.localhostRefusal(request);
      if (refusal !== undefined) return ui.refuse(response, path, refusal);
      guards.checkHostAndOrigin(request);
    }
    if (transport === "socket" && !path.startsWith("/v1/"))
      throw new ApiError("not_found", "the API socket serves /v1 only; the web UI is on the TCP port");
    if (path === "/ui/sign-in") return ui.signIn(request, response);
    if (path === "/ui/identity") return ui.identity(request, response);
    if (path === "/ui/challenge") return ui.challenge(request, response);
    if (path === "/ui/access") return ui.access(request, response);
    if (!path.startsWith("/v1/")) return ui.serve(request, response, path);
    const caller: Caller = transport === "socket" ? { kind: "token" } : guards.apiCaller(request);
    const matching = routes.filter((route) => route.pattern.test(path));
    const route = matching.find((each) => each.method === request.method);
    if (route === undefined) {
      if (matching.length > 0)
        throw notAllowed(
          request.method,
          path,
          matching.map((each) => each.method),
        );
      throw new ApiError("not_found", `no route ${path}`);
    }
    if (route.tokenOnly && caller.kind !== "token")
      throw new ApiError("forbidden", `${path} needs the API token`);
    const params = route.pattern
      .exec(path)!
      .slice(1)
      .map((part) => decodePathPart(part, path));
    const actor =
      route.decides === undefined ? undefined : await deps.actorOf(request, transport, caller, route.decides);
    await route.handler(request, response, params, { ...(actor !== undefined && { actor }) });
  }

  const handlerFor =
    (transport: "tcp" | "socket") => (request: IncomingMessage, response: ServerResponse) => {
      void dispatch(request, response, transport).catch((error: unknown) =>
        sendError(response, error, deps.logger),
      );
    };
  const limits = deps.connectionLimits ?? defaultApiConnectionLimits;
  const server = createServer(handlerFor("tcp"));
  limitHttpConnections(server, limits);
  try {
    await listen(server, port);
  } catch (error) {
    if (port === 0 || (error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    // Another process holds the port: a page it served in a signed-in tab could read that tab's token.
    const revoked = await deps.uiAuth.revokePort(port);
    deps.logger.warn("the port is taken by another process; browser sign-ins bound to it are revoked", {
      port,
      revoked,
    });
    if (!anyPortIfTaken) throw error;
    await listen(server, 0);
  }
  boundPort = (server.address() as AddressInfo).port;
  // A token bound to any other port is of no use here, and whoever held that port meanwhile may have read it.
  await deps.uiAuth.retainPort(boundPort);
  const v6Server = createServer(handlerFor("tcp"));
  limitHttpConnections(v6Server, limits);
  loopbackV6 = await listenLoopbackV6(v6Server, boundPort);
  if (!loopbackV6.held) {
    // Whoever holds [::1] may have served a localhost tab its page meanwhile, as a taken port's holder could.
    const revoked = await deps.uiAuth.revokeOrigin(`http://localhost:${boundPort}`);
    const log = loopbackV6.code === "EADDRINUSE" ? deps.logger.warn : deps.logger.info;
    log.call(deps.logger, "http://localhost is not served; the web UI is on http://127.0.0.1 only", {
      port: boundPort,
      reason: loopbackV6.why,
      code: loopbackV6.code,
      revoked,
    });
  }
  const servers = loopbackV6.held ? [server, v6Server] : [server];
  const socketServer = deps.socketPath === undefined ? undefined : createServer(handlerFor("socket"));
  if (socketServer !== undefined && deps.socketPath !== undefined) {
    limitHttpConnections(socketServer, limits);
    try {
      await listenOnSocket(socketServer, deps.socketPath);
    } catch (error) {
      await Promise.all(servers.map(closeServer));
      throw error;
    }
  }

  return {
    port: boundPort,
    server,
    loopbackV6,
    ...(socketServer !== undefined && { socketServer }),
    async close() {
      for (const stream of openStreams) stream.end();
      await Promise.all([...servers.map(closeServer), socketServer && closeServer(socketServer)]);
    },
  };
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}
