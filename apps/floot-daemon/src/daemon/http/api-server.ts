import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { FlootDaemonStatus } from "@bridgeworks/protocol";
import type { Logger } from "@bridgeworks/runtime";
import type { TurnJournal } from "@bridgeworks/turn-journal";
import type { SecretBroker } from "../secret-broker.js";
import type { SessionStore } from "../session-store.js";
import type { TurnCoordinator } from "../turn-coordinator.js";
import type { UiAuth } from "../ui-auth.js";
import { ApiError, notAllowed, sendError } from "./api-error.js";
import { createGuards } from "./guards.js";
import { apiRoutes } from "./routes.js";
import { createUiPages } from "./ui-pages.js";

export interface ApiDeps {
  journal: TurnJournal;
  sessions: SessionStore;
  coordinator: TurnCoordinator;
  secrets: SecretBroker;
  token: string;
  logger: Logger;
  status: () => FlootDaemonStatus;
  /** The web UI's sign-in codes, origin-bound tokens and identity proofs. */
  uiAuth: UiAuth;
  /** Static files of the web UI, served to a logged-in browser only; absent when not installed. */
  uiDir?: string;
  heartbeatMs?: number;
}

export interface ApiServer {
  port: number;
  server: Server;
  close(): Promise<void>;
}

/**
 * The daemon's HTTP server on 127.0.0.1: every request passes the Host/Origin guard; `/v1` needs the
 * API token (or the web UI's origin-bound token) and goes to the route table; `/ui/*` and everything
 * else is the web UI. With `anyPortIfTaken`, a taken `port` falls back to a free one.
 */
export async function startApiServer(deps: ApiDeps, port = 0, anyPortIfTaken = false): Promise<ApiServer> {
  let boundPort = 0;
  const openStreams = new Set<ServerResponse>();
  const guards = createGuards({ token: deps.token, uiAuth: deps.uiAuth, port: () => boundPort });
  const ui = createUiPages({ uiAuth: deps.uiAuth, guards, uiDir: deps.uiDir });
  const routes = apiRoutes({
    ...deps,
    follow: { journal: deps.journal, heartbeatMs: deps.heartbeatMs ?? 15_000, openStreams },
  });

  async function dispatch(request: IncomingMessage, response: ServerResponse): Promise<void> {
    guards.checkHostAndOrigin(request);
    const path = new URL(request.url ?? "/", "http://x").pathname;
    if (path === "/ui/sign-in") return ui.signIn(request, response);
    if (path === "/ui/identity") return ui.identity(request, response);
    if (!path.startsWith("/v1/")) return ui.serve(request, response, path);
    const caller = guards.apiCaller(request);
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
    if (route.tokenOnly && caller !== "token") throw new ApiError("forbidden", `${path} needs the API token`);
    const params = route.pattern.exec(path)!.slice(1).map(decodeURIComponent);
    await route.handler(request, response, params);
  }

  const server = createServer((request, response) => {
    void dispatch(request, response).catch((error: unknown) => sendError(response, error, deps.logger));
  });
  try {
    await listen(server, port);
  } catch (error) {
    if (!anyPortIfTaken || port === 0 || (error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    await listen(server, 0);
  }
  boundPort = (server.address() as AddressInfo).port;

  return {
    port: boundPort,
    server,
    async close() {
      for (const stream of openStreams) stream.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
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
