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
  SendTurnRequest,
  SubmitSecretRequest,
} from "@bridgeworks/protocol";
import { followTurn, JournalError, type TurnJournal } from "@bridgeworks/turn-journal";
import type { z } from "zod";
import type { Logger } from "../log.js";
import { type SecretBroker, SecretBrokerError } from "./secret-broker.js";
import type { SessionStore } from "./session-store.js";
import type { TurnCoordinator } from "./turn-coordinator.js";

export interface ApiDeps {
  journal: TurnJournal;
  sessions: SessionStore;
  coordinator: TurnCoordinator;
  secrets: SecretBroker;
  token: string;
  logger: Logger;
  status: () => FlootDaemonStatus;
  /** Static files of the web UI, served without a token (they hold no data); absent until a UI exists. */
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
}

/**
 * The daemon's HTTP API on 127.0.0.1: Bearer token (compared in constant time), `Host` must name this
 * listener, an `Origin` other than the UI's own is refused, every body is validated and an error names
 * the field. Routes are under `/v1`; everything else is the web UI's static files.
 */
export async function startApiServer(deps: ApiDeps, port = 0): Promise<ApiServer> {
  const { journal, sessions, coordinator, secrets } = deps;
  let boundPort = 0;
  const openStreams = new Set<ServerResponse>();

  const routes: Route[] = [
    { method: "GET", pattern: /^\/v1\/status$/, handler: async (_q, r) => send(r, 200, deps.status()) },
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
    if (!path.startsWith("/v1/")) return serveUi(request, response, path);
    if (!authorized(request.headers.authorization)) {
      throw new ApiError(401, "unauthorized", "a valid Authorization: Bearer token is required");
    }
    let pathMatched = false;
    for (const route of routes) {
      const match = route.pattern.exec(path);
      if (!match) continue;
      pathMatched = true;
      if (route.method !== request.method) continue;
      await route.handler(request, response, match.slice(1).map(decodeURIComponent));
      return;
    }
    if (pathMatched)
      throw new ApiError(405, "method_not_allowed", `${request.method} is not allowed on ${path}`);
    throw new ApiError(404, "not_found", `no route ${path}`);
  }

  function authorized(header: string | undefined): boolean {
    const match = /^Bearer ([^\s]+)$/.exec(header ?? "");
    return match !== null && tokensEqual(match[1]!, deps.token);
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
      "x-content-type-options": "nosniff",
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

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
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
