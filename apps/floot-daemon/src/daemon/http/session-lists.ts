import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type FlootDaemonStatus,
  type FlootMoment,
  type FlootOverview,
  type FlootSessionChange,
  type FlootSessionList,
  type FlootSessionSummary,
  type PermissionRequest,
  type SessionPageQuery,
  type SessionRecord,
  SessionStatus,
  type WaitingSessionPageQuery,
} from "@bridgeworks/protocol";
import { sendJson as send } from "@bridgeworks/runtime";
import type { TurnJournal } from "@bridgeworks/turn-journal";
import type { MomentSource } from "../moments.js";
import type { SessionStore } from "../session-store.js";
import { ApiError } from "./api-error.js";
import type { SlicedQueue } from "./sliced-queue.js";
import { type SseResponseOptions, startSseResponse } from "./sse-response.js";

export interface SessionListDeps {
  journal: TurnJournal;
  sessions: SessionStore;
  status: () => FlootDaemonStatus;
  /** A session's open permission requests as the API shows them (with `expiresAt`). */
  openPermissionRequests: (sessionId: string) => PermissionRequest[];
  /** Where a page's steps take their turns, with the rest of the requests' bulk work. */
  slices: SlicedQueue;
  /** Approvals and secrets asked, turns ended: the change stream sends each as it happens. */
  moments?: MomentSource;
}

const maxSearchLength = 200;

/** `?limit=&cursor=` of any list of sessions; a bad limit is a 400 naming it. */
function pageBounds(params: URLSearchParams): WaitingSessionPageQuery {
  const query: WaitingSessionPageQuery = {};
  const limit = params.get("limit");
  if (limit !== null) {
    if (!/^\d{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > 500) {
      throw new ApiError("bad_request", "limit: must be an integer from 1 to 500", { field: "limit" });
    }
    query.limit = Number(limit);
  }
  const cursor = params.get("cursor");
  if (cursor !== null && cursor !== "") query.cursor = cursor;
  return query;
}

/** `?waiting=true`: the overview of the sessions waiting on a person; with `status` or `q`, a 400. */
function waitingPageQuery(request: IncomingMessage): WaitingSessionPageQuery | undefined {
  const params = new URL(request.url ?? "/", "http://x").searchParams;
  const waiting = params.get("waiting");
  if (waiting === null || waiting === "false") return undefined;
  if (waiting !== "true")
    throw new ApiError("bad_request", "waiting: must be true or false", { field: "waiting" });
  for (const field of ["status", "q"]) {
    if (params.get(field))
      throw new ApiError("bad_request", `${field}: cannot be combined with waiting=true`, { field });
  }
  return pageBounds(params);
}

/** `?limit=&cursor=&status=&q=` of a session list; each bad one is a 400 naming it. */
export function sessionPageQuery(request: IncomingMessage): SessionPageQuery {
  const params = new URL(request.url ?? "/", "http://x").searchParams;
  const query: SessionPageQuery = pageBounds(params);
  const status = params.get("status");
  if (status !== null && status !== "") {
    const parsed = SessionStatus.safeParse(status);
    if (!parsed.success) {
      throw new ApiError("bad_request", `status: must be one of ${SessionStatus.options.join(", ")}`, {
        field: "status",
      });
    }
    query.status = parsed.data;
  }
  const search = params.get("q")?.trim();
  if (search) {
    if (search.length > maxSearchLength) {
      throw new ApiError("bad_request", `q: at most ${maxSearchLength} characters`, { field: "q" });
    }
    query.search = search;
  }
  return query;
}

export function sessionSummary(deps: SessionListDeps, record: SessionRecord): FlootSessionSummary {
  const currentTurn = deps.journal.turns.getCurrentTurn(record.id);
  return { session: deps.sessions.present(record), ...(currentTurn && { currentTurn }) };
}

/**
 * The page a list request asks for (a bad parameter is a 400 at once), read from its first turn in the
 * sliced queue on: eight pages asked at once go a step at a time between the loop's polls, not on arrival.
 */
async function readPage(deps: SessionListDeps, request: IncomingMessage) {
  const query = sessionPageQuery(request);
  const pause = () => deps.slices.turn();
  await pause();
  return deps.journal.sessions.listSessionPageInSteps(query, { pause });
}

/** The page an overview asks for: of the sessions waiting on a person, or of all (filtered). */
async function readOverviewPage(deps: SessionListDeps, request: IncomingMessage) {
  const waiting = waitingPageQuery(request);
  if (waiting === undefined) return readPage(deps, request);
  await deps.slices.turn();
  const page = deps.journal.sessions.listWaitingSessionPage(waiting);
  return { ...page, sessions: page.sessions.map(({ session }) => session) };
}

/** Sessions an overview summarizes in one step (each: its current turn, options and open requests). */
const summaryStep = 10;

/**
 * `GET /v1/overview`: one page of summaries and the open requests of those sessions only; with
 * `?waiting=true`, of the sessions waiting on a person, the longest waiting first.
 */
export async function sendOverview(
  deps: SessionListDeps,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const { sessions, nextCursor } = await readOverviewPage(deps, request);
  const summaries: FlootSessionSummary[] = [];
  const secretRequests: FlootOverview["secretRequests"] = [];
  const permissionRequests: PermissionRequest[] = [];
  for (let start = 0; start < sessions.length; start += summaryStep) {
    if (start > 0) await deps.slices.turn();
    // A session's summary and its requests are read in one step: consistent with each other.
    for (const record of sessions.slice(start, start + summaryStep)) {
      summaries.push(sessionSummary(deps, record));
      secretRequests.push(...deps.journal.secrets.listOpenSecretRequests(record.id));
      permissionRequests.push(...deps.openPermissionRequests(record.id));
    }
  }
  const overview: FlootOverview = {
    status: deps.status(),
    sessions: summaries,
    secretRequests,
    permissionRequests,
    ...(nextCursor !== undefined && { nextCursor }),
  };
  send(response, 200, overview);
}

/** `GET /v1/sessions`: one page of sessions, newest first. */
export async function sendSessionList(
  deps: SessionListDeps,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const { sessions, nextCursor } = await readPage(deps, request);
  const list: FlootSessionList = {
    sessions: sessions.map((record) => deps.sessions.present(record)),
    ...(nextCursor !== undefined && { nextCursor }),
  };
  send(response, 200, list);
}

/**
 * `GET /v1/changes`: one Server-Sent Events stream of session changes (and of moments: approvals and
 * secrets asked, turns ended, each once as it happens) for every open list. The hub
 * hears the journal once, coalesces what one turn of the event loop changed, renders each changed
 * session once and writes the same bytes to every stream: the cost follows the changes, not the
 * number of sessions or of watchers.
 */
export class SessionChangeHub {
  readonly #deps: SessionListDeps;
  readonly #streams = new Set<ServerResponse>();
  readonly #changed = new Set<string>();
  readonly #moments: FlootMoment[] = [];
  #scheduled = false;
  #unsubscribe: (() => void) | undefined;

  constructor(deps: SessionListDeps) {
    this.#deps = deps;
  }

  attach(response: ServerResponse): () => void {
    this.#streams.add(response);
    if (this.#unsubscribe === undefined) {
      const sessions = this.#deps.journal.sessions.subscribeSessionChanges((id) => this.#note(id));
      const moments = this.#deps.moments?.subscribe((moment) => this.#noteMoment(moment));
      this.#unsubscribe = () => {
        sessions();
        moments?.();
      };
    }
    return () => {
      this.#streams.delete(response);
      if (this.#streams.size > 0) return;
      this.#unsubscribe?.();
      this.#unsubscribe = undefined;
    };
  }

  #note(sessionId: string): void {
    this.#changed.add(sessionId);
    this.#schedule();
  }

  #noteMoment(moment: FlootMoment): void {
    this.#moments.push(moment);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#broadcast());
  }

  #broadcast(): void {
    this.#scheduled = false;
    let chunk = "";
    for (const sessionId of this.#changed) {
      const record = this.#deps.journal.sessions.getSession(sessionId);
      if (!record) continue;
      const change: FlootSessionChange = {
        summary: sessionSummary(this.#deps, record),
        secretRequests: this.#deps.journal.secrets.listOpenSecretRequests(sessionId),
        permissionRequests: this.#deps.openPermissionRequests(sessionId),
      };
      chunk += `event: session\ndata: ${JSON.stringify(change)}\n\n`;
    }
    this.#changed.clear();
    // After the sessions they changed: a page shows the request before it is told of it.
    for (const moment of this.#moments.splice(0))
      chunk += `event: moment\ndata: ${JSON.stringify(moment)}\n\n`;
    if (chunk === "") return;
    for (const stream of this.#streams) stream.write(chunk);
  }
}

export interface SessionChangeStreamOptions extends SseResponseOptions {
  hub: SessionChangeHub;
}

export function sessionChangesOverSse(
  request: IncomingMessage,
  response: ServerResponse,
  { hub, heartbeatMs, openStreams }: SessionChangeStreamOptions,
): void {
  let detach = () => {};
  startSseResponse(request, response, { heartbeatMs, openStreams }, () => detach());
  response.write(": watching session changes\n\n");
  detach = hub.attach(response);
}
