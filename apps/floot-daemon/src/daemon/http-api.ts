import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, sep } from "node:path";
import { tokensEqual } from "@bridgeworks/control-channel";
import {
  CreateSessionRequest,
  type FlootApiError,
  type FlootDaemonStatus,
  type FlootEventPage,
  type FlootOverview,
  SendTurnRequest,
  SubmitSecretRequest,
} from "@bridgeworks/protocol";
import { followTurn, JournalError, type TurnJournal } from "@bridgeworks/turn-journal";
import type { z } from "zod";
import type { Logger } from "../log.js";
import { type SecretBroker, SecretBrokerError } from "./secret-broker.js";
import type { SessionStore } from "./session-store.js";
import type { TurnCoordinator } from "./turn-coordinator.js";
import type { UiAuth } from "./ui-auth.js";

export interface ApiDeps {
  journal: TurnJournal;
  sessions: SessionStore;
  coordinator: TurnCoordinator;
  secrets: SecretBroker;
  token: string;
  logger: Logger;
  status: () => FlootDaemonStatus;
  /** The web UI's login codes and session cookies. */
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

const maxBodyBytes = 1024 * 1024;

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

const journalErrorStatus: Record<string, number> = {
  invalid_input: 400,
  session_not_found: 404,
  turn_not_found: 404,
  secret_request_not_found: 404,
  session_exists: 409,
  session_stopped: 409,
  session_busy: 409,
  invalid_transition: 409,
  not_accepting_events: 409,
  turn_not_retryable: 409,
  turn_has_effects: 409,
  secret_request_closed: 409,
};

type Handler = (request: IncomingMessage, response: ServerResponse, params: string[]) => Promise<void>;

interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
  /** Only with the API token: never with the web UI's cookie. */
  tokenOnly?: boolean;
}

type Caller = "token" | "cookie";

/**
 * The daemon's HTTP API on 127.0.0.1: Bearer token (compared in constant time), `Host` must name this
 * listener, an `Origin` other than the UI's own is refused, every body is validated and an error names
 * the field. Routes are under `/v1`; everything else is the web UI's static files.
 */
export async function startApiServer(deps: ApiDeps, port = 0, anyPortIfTaken = false): Promise<ApiServer> {
  const { journal, sessions, coordinator, secrets } = deps;
  let boundPort = 0;
  const openStreams = new Set<ServerResponse>();

  const routes: Route[] = [
    { method: "GET", pattern: /^\/v1\/status$/, handler: async (_q, r) => send(r, 200, deps.status()) },
    {
      method: "POST",
      pattern: /^\/v1\/ui\/login-codes$/,
      tokenOnly: true,
      handler: async (_q, r) => send(r, 201, deps.uiAuth.mintLoginCode()),
    },
    {
      method: "GET",
      pattern: /^\/v1\/overview$/,
      handler: async (_q, r) => {
        const overview: FlootOverview = {
          status: deps.status(),
          sessions: journal.listSessions().map((record) => {
            const currentTurn = journal.getCurrentTurn(record.id);
            return { session: sessions.present(record), ...(currentTurn && { currentTurn }) };
          }),
          secretRequests: journal.listOpenSecretRequests(),
        };
        send(r, 200, overview);
      },
    },
    {
      method: "GET",
      pattern: /^\/v1\/sessions$/,
      handler: async (_q, r) =>
        send(r, 200, { sessions: journal.listSessions().map((record) => sessions.present(record)) }),
    },
    {
      method: "POST",
      pattern: /^\/v1\/sessions$/,
      handler: async (q, r) => {
        const { backend, ...options } = await readBody(q, CreateSessionRequest);
        const record = journal.createSession({ backend });
        await sessions.save(record.id, options);
        send(r, 201, sessions.present(record));
      },
    },
    {
      method: "GET",
      pattern: /^\/v1\/sessions\/([^/]+)$/,
      handler: async (_q, r, [id]) => send(r, 200, sessions.present(requireSession(id!))),
    },
    {
      method: "GET",
      pattern: /^\/v1\/sessions\/([^/]+)\/turns$/,
      handler: async (_q, r, [id]) => send(r, 200, { turns: journal.listTurns(requireSession(id!).id) }),
    },
    {
      method: "POST",
      pattern: /^\/v1\/sessions\/([^/]+)\/turns$/,
      handler: async (q, r, [id]) => {
        const input = await readBody(q, SendTurnRequest);
        const turn = journal.submitTurn(requireSession(id!).id, input);
        coordinator.kick(turn.sessionId);
        send(r, 202, journal.getTurn(turn.id));
      },
    },
    {
      method: "GET",
      pattern: /^\/v1\/sessions\/([^/]+)\/current-turn$/,
      handler: async (_q, r, [id]) => {
        const turn = journal.getCurrentTurn(requireSession(id!).id);
        if (!turn) throw new ApiError(404, "not_found", `session ${id} has no turn yet`);
        send(r, 200, turn);
      },
    },
    {
      method: "GET",
      pattern: /^\/v1\/turns\/([^/]+)$/,
      handler: async (_q, r, [id]) => send(r, 200, requireTurn(id!)),
    },
    {
      method: "GET",
      pattern: /^\/v1\/turns\/([^/]+)\/events$/,
      handler: async (q, r, [id]) => {
        const turn = requireTurn(id!);
        const from = indexParam(q, "from") ?? 0;
        const events = journal.readEvents(turn.id, from);
        const page: FlootEventPage = { events, nextIndex: events.at(-1) ? events.at(-1)!.index + 1 : from };
        send(r, 200, page);
      },
    },
    {
      method: "GET",
      pattern: /^\/v1\/turns\/([^/]+)\/follow$/,
      handler: async (q, r, [id]) => follow(q, r, id!),
    },
    {
      method: "POST",
      pattern: /^\/v1\/turns\/([^/]+)\/cancel$/,
      handler: async (_q, r, [id]) => send(r, 200, await coordinator.cancel(requireTurn(id!).id)),
    },
    {
      method: "POST",
      pattern: /^\/v1\/turns\/([^/]+)\/retry$/,
      handler: async (_q, r, [id]) => {
        const retry = journal.retryTurn(requireTurn(id!).id);
        coordinator.kick(retry.sessionId);
        send(r, 202, journal.getTurn(retry.id));
      },
    },
    {
      method: "GET",
      pattern: /^\/v1\/secret-requests$/,
      handler: async (_q, r) => send(r, 200, { requests: journal.listOpenSecretRequests() }),
    },
    {
      method: "POST",
      pattern: /^\/v1\/secret-requests\/([^/]+)\/submit$/,
      handler: async (q, r, [id]) => {
        const { value } = await readBody(q, SubmitSecretRequest);
        send(r, 200, secrets.submit(id!, value));
      },
    },
  ];

  function requireSession(id: string) {
    const session = journal.getSession(id);
    if (!session) throw new ApiError(404, "not_found", `session ${id} does not exist`);
    return session;
  }

  function requireTurn(id: string) {
    const turn = journal.getTurn(id);
    if (!turn) throw new ApiError(404, "not_found", `turn ${id} does not exist`);
    return turn;
  }

  function indexParam(request: IncomingMessage, name: string): number | undefined {
    const raw = new URL(request.url ?? "/", "http://x").searchParams.get(name);
    if (raw === null) return undefined;
    if (!/^\d{1,9}$/.test(raw))
      throw new ApiError(400, "bad_request", `${name}: must be a non-negative integer`, name);
    return Number(raw);
  }

  /** Server-Sent Events: `id:` is the event index; `Last-Event-ID` (or `?from=`) says where to resume. */
  async function follow(request: IncomingMessage, response: ServerResponse, turnId: string): Promise<void> {
    const turn = requireTurn(turnId);
    const lastEventId = request.headers["last-event-id"];
    let from = indexParam(request, "from") ?? 0;
    if (typeof lastEventId === "string" && lastEventId !== "") {
      if (!/^\d{1,9}$/.test(lastEventId)) {
        throw new ApiError(400, "bad_request", "Last-Event-ID: must be an event index", "Last-Event-ID");
      }
      from = Number(lastEventId) + 1;
    }
    response.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-store",
      connection: "keep-alive",
      "x-content-type-options": "nosniff",
    });
    response.flushHeaders();
    openStreams.add(response);
    const heartbeat = setInterval(() => response.write(": keep-alive\n\n"), deps.heartbeatMs ?? 15_000);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      openStreams.delete(response);
      handle?.close();
      response.end();
    };
    const handle = followTurn(journal, turn.id, from, (events) => {
      let chunk = "";
      for (const envelope of events) {
        chunk += `id: ${envelope.index}\nevent: turn-event\ndata: ${JSON.stringify(envelope)}\n\n`;
      }
      response.write(chunk);
      if (events.at(-1)?.event.type === "terminal") queueMicrotask(end);
    });
    if (handle.closed) end();
    request.on("close", end);
  }

  const server = createServer((request, response) => {
    void dispatch(request, response).catch((error: unknown) => fail(response, error));
  });

  async function dispatch(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const ownOrigins = [`http://127.0.0.1:${boundPort}`, `http://localhost:${boundPort}`];
    const host = request.headers.host;
    if (host !== `127.0.0.1:${boundPort}` && host !== `localhost:${boundPort}`) {
      throw new ApiError(403, "forbidden", "Host must name this daemon's own address");
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !ownOrigins.includes(origin)) {
      throw new ApiError(403, "forbidden", "cross-origin requests are refused");
    }
    const path = new URL(request.url ?? "/", "http://x").pathname;
    if (path === "/login") return login(request, response);
    if (!path.startsWith("/v1/")) {
      if (!hasUiSession(request)) return refuseUi(request, response);
      return serveUi(request, response, path);
    }
    const caller = callerOf(request);
    if (caller === undefined) {
      throw new ApiError(401, "unauthorized", "a valid Authorization: Bearer token is required");
    }
    if (caller === "cookie" && !sameOriginForCookie(request, ownOrigins)) {
      throw new ApiError(
        403,
        "forbidden",
        "a cookie-authenticated change must come from the web UI's own page",
      );
    }
    let pathMatched = false;
    for (const route of routes) {
      const match = route.pattern.exec(path);
      if (!match) continue;
      pathMatched = true;
      if (route.method !== request.method) continue;
      if (route.tokenOnly && caller !== "token") {
        throw new ApiError(403, "forbidden", `${path} needs the API token`);
      }
      await route.handler(request, response, match.slice(1).map(decodeURIComponent));
      return;
    }
    if (pathMatched)
      throw new ApiError(405, "method_not_allowed", `${request.method} is not allowed on ${path}`);
    throw new ApiError(404, "not_found", `no route ${path}`);
  }

  function callerOf(request: IncomingMessage): Caller | undefined {
    const match = /^Bearer ([^\s]+)$/.exec(request.headers.authorization ?? "");
    if (match !== null) return tokensEqual(match[1]!, deps.token) ? "token" : undefined;
    return hasUiSession(request) ? "cookie" : undefined;
  }

  function cookieName(): string {
    // Cookies are shared by every port of a host: each daemon names its own.
    return `floot_session_${boundPort}`;
  }

  function hasUiSession(request: IncomingMessage): boolean {
    return deps.uiAuth.isSession(readCookie(request.headers.cookie, cookieName()));
  }

  async function login(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== "GET")
      throw new ApiError(405, "method_not_allowed", `${request.method} is not allowed on /login`);
    const code = new URL(request.url ?? "/", "http://x").searchParams.get("code") ?? "";
    const session = /^[A-Za-z0-9_-]{1,64}$/.test(code) ? await deps.uiAuth.redeemLoginCode(code) : undefined;
    if (session === undefined) {
      return sendPage(
        response,
        401,
        "This login link is used up or expired",
        "Run <code>floot open</code> for a fresh one.",
      );
    }
    response.writeHead(303, {
      location: "/",
      "set-cookie": `${cookieName()}=${session}; HttpOnly; SameSite=Strict; Path=/`,
      ...pageHeaders,
      "cache-control": "no-store",
    });
    response.end();
  }

  function refuseUi(request: IncomingMessage, response: ServerResponse): void {
    if (request.method !== "GET" && request.method !== "HEAD") {
      throw new ApiError(405, "method_not_allowed", `${request.method} is not allowed here`);
    }
    if (!deps.uiDir) throw new ApiError(404, "not_found", "the web UI is not installed");
    sendPage(
      response,
      401,
      "Sign in with floot open",
      "Run <code>floot open</code> and follow the link it prints.",
    );
  }

  async function serveUi(request: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
    if (request.method !== "GET" && request.method !== "HEAD") {
      throw new ApiError(405, "method_not_allowed", `${request.method} is not allowed on ${path}`);
    }
    const root = deps.uiDir;
    const relative = path === "/" ? "index.html" : normalize(decodeURIComponent(path)).replace(/^[/\\]+/, "");
    const file = root ? join(root, relative) : undefined;
    if (!root || !file?.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) {
      throw new ApiError(404, "not_found", root ? `no file ${path}` : "the web UI is not installed");
    }
    response.writeHead(200, {
      "content-type": contentTypes[extname(file)] ?? "application/octet-stream",
      ...pageHeaders,
    });
    if (request.method === "HEAD") return void response.end();
    createReadStream(file).pipe(response);
  }

  function fail(response: ServerResponse, error: unknown): void {
    if (response.headersSent) {
      response.destroy();
      return;
    }
    let apiError: ApiError;
    if (error instanceof ApiError) apiError = error;
    else if (error instanceof JournalError) {
      apiError = new ApiError(journalErrorStatus[error.code] ?? 500, error.code, error.message);
    } else if (error instanceof SecretBrokerError) {
      apiError = new ApiError(
        error.code === "secret_request_not_found" ? 404 : 409,
        error.code,
        error.message,
      );
    } else {
      deps.logger.log("error", "request failed", {
        error: error instanceof Error ? error.message : String(error),
      });
      apiError = new ApiError(500, "internal", "internal error");
    }
    const body: FlootApiError = {
      error: {
        code: apiError.code,
        message: apiError.message,
        ...(apiError.field !== undefined && { field: apiError.field }),
      },
    };
    send(response, apiError.status, body);
  }

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

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

function listen(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

// The page runs only its own script and style, talks only to this daemon, and is never framed.
const pageHeaders = {
  "cache-control": "no-cache",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};

/** A cookie-authenticated request must come from the UI's own page: state changes carry proof of it. */
function sameOriginForCookie(request: IncomingMessage, ownOrigins: string[]): boolean {
  const site = request.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") return false;
  if (request.method === "GET" || request.method === "HEAD") return true;
  const origin = request.headers.origin;
  return (origin !== undefined && ownOrigins.includes(origin)) || site === "same-origin";
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at !== -1 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

function sendPage(response: ServerResponse, status: number, title: string, html: string): void {
  const text = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Floot</title><h1>${title}</h1><p>${html}</p></html>\n`;
  response.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...pageHeaders,
    "cache-control": "no-store",
  });
  response.end(text);
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  response.end(text);
}

async function readBody<T>(request: IncomingMessage, schema: z.ZodType<T>): Promise<T> {
  const type = request.headers["content-type"] ?? "";
  if (!/^application\/json\b/i.test(type)) {
    throw new ApiError(415, "unsupported_media_type", "the body must be application/json");
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) throw new ApiError(413, "payload_too_large", "the body must be at most 1 MiB");
    chunks.push(chunk as Buffer);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new ApiError(400, "invalid_body", "the body is not valid JSON");
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const keys = issue.code === "unrecognized_keys" ? (issue as { keys: string[] }).keys : [];
  const field = [...issue.path.map(String), ...keys].join(".");
  const message = parsed.error.issues
    .map((each) => {
      const extra = each.code === "unrecognized_keys" ? (each as { keys: string[] }).keys.join(", ") : "";
      const name = [...each.path.map(String)].join(".") || extra || "body";
      return `${name}: ${each.message}`;
    })
    .join("; ");
  throw new ApiError(400, "invalid_body", message, field || undefined);
}
