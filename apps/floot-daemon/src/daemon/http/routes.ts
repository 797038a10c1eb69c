import type { IncomingMessage, ServerResponse } from "node:http";
import {
  CreateSessionRequest,
  type FlootDaemonStatus,
  type FlootEventPage,
  SendTurnRequest,
  SubmitSecretRequest,
} from "@bridgeworks/protocol";
import { describeError, type Logger, sendJson as send } from "@bridgeworks/runtime";
import type { TurnJournal } from "@bridgeworks/turn-journal";
import type { PermissionBroker } from "../permission-broker.js";
import type { SecretBroker } from "../secret-broker.js";
import type { SessionStore } from "../session-store.js";
import type { TurnCoordinator } from "../turn-coordinator.js";
import type { UiAuth } from "../ui-auth.js";
import { ApiError } from "./api-error.js";
import { indexParam, readBody } from "./body.js";
import { SessionChangeHub, sendOverview, sendSessionList, sessionChangesOverSse } from "./session-lists.js";
import type { SlicedQueue } from "./sliced-queue.js";
import { followOverSse, type SseFollowOptions } from "./sse-follow.js";

export type Method = "GET" | "POST";

export interface Route {
  method: Method;
  pattern: RegExp;
  handler: (request: IncomingMessage, response: ServerResponse, params: string[]) => Promise<void>;
  /** Only with the API token: never with the web UI's page token. */
  tokenOnly?: boolean;
}

export interface RouteDeps {
  journal: TurnJournal;
  sessions: SessionStore;
  coordinator: TurnCoordinator;
  secrets: SecretBroker;
  permissions: PermissionBroker;
  uiAuth: UiAuth;
  status: () => FlootDaemonStatus;
  /** The loop's share for the bulk work of requests; a read never waits in it. */
  slices: SlicedQueue;
  follow: SseFollowOptions;
  logger: Logger;
}

/** The `/v1` API, one entry per method and path; bodies are validated with protocol's schemas. */
export function apiRoutes({
  journal,
  sessions,
  coordinator,
  secrets,
  permissions,
  uiAuth,
  status,
  slices,
  follow,
  logger,
}: RouteDeps): Route[] {
  const requireSession = (id: string) => {
    const session = journal.getSession(id);
    if (!session) throw new ApiError("not_found", `session ${id} does not exist`);
    return session;
  };
  const requireTurn = (id: string) => {
    const turn = journal.getTurn(id);
    if (!turn) throw new ApiError("not_found", `turn ${id} does not exist`);
    return turn;
  };
  const openPermissionRequests = (sessionId: string) =>
    journal.listOpenPermissionRequests(sessionId).map((request) => permissions.present(request));
  const lists = { journal, sessions, status, openPermissionRequests, slices };
  const changes = new SessionChangeHub(lists);

  return [
    { method: "GET", pattern: /^\/v1\/status$/, handler: async (_q, r) => send(r, 200, status()) },
    {
      method: "POST",
      pattern: /^\/v1\/ui\/login-codes$/,
      tokenOnly: true,
      handler: async (_q, r) => send(r, 201, uiAuth.mintLoginCode()),
    },
    {
      method: "GET",
      pattern: /^\/v1\/overview$/,
      handler: async (q, r) => sendOverview(lists, q, r),
    },
    {
      method: "GET",
      pattern: /^\/v1\/changes$/,
      handler: async (q, r) =>
        sessionChangesOverSse(q, r, {
          hub: changes,
          heartbeatMs: follow.heartbeatMs,
          openStreams: follow.openStreams,
        }),
    },
    {
      method: "GET",
      pattern: /^\/v1\/sessions$/,
      handler: async (q, r) => sendSessionList(lists, q, r),
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
        // Ten submitted at once go a few per turn of the loop, the reads that wait between them. No
        // fsync of its own on the loop: the turns accepted meanwhile share one on the thread pool,
        // and neither the answer nor the CLI comes before the accept is on disk.
        await slices.turn();
        const turn = journal.deferDurability(() => journal.submitTurn(requireSession(id!).id, input));
        try {
          await journal.sync();
        } catch (error) {
          throw withdrawUnsynced(journal, turn.id, error, logger);
        }
        await slices.turn();
        coordinator.kick(turn.sessionId);
        send(r, 202, journal.getTurn(turn.id));
      },
    },
    {
      method: "GET",
      pattern: /^\/v1\/sessions\/([^/]+)\/current-turn$/,
      handler: async (_q, r, [id]) => {
        const turn = journal.getCurrentTurn(requireSession(id!).id);
        if (!turn) throw new ApiError("not_found", `session ${id} has no turn yet`);
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
      handler: async (q, r, [id]) => followOverSse(q, r, requireTurn(id!), follow),
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
}

/**
 * A submitted turn whose accept could not be synced to disk is withdrawn (failed, or cancelled while
 * queued), as a `synchronous=FULL` commit whose fsync failed would not have recorded it: its submitter
 * is answered 500 and may submit again, so this one must not run as well.
 */
function withdrawUnsynced(journal: TurnJournal, turnId: string, error: unknown, logger: Logger): ApiError {
  const cause = `the journal could not be synced to disk (${describeError(error)})`;
  const reason = { code: "journal_sync_failed", message: cause };
  let outcome = "it is withdrawn";
  try {
    const phase = journal.getTurn(turnId)?.phase;
    if (phase === "queued" || phase === "accepted") {
      const to = phase === "queued" ? "cancelled" : "failed";
      journal.deferDurability(() => journal.transition(turnId, { phase: to, error: reason }));
    } else {
      outcome = `it is ${phase} already`;
    }
  } catch (withdrawal) {
    outcome = `withdrawing it failed too (${describeError(withdrawal)})`;
  }
  logger.error("turn not accepted: journal sync failed", { turn: turnId, error: cause, outcome });
  return new ApiError("internal", `turn ${turnId} not accepted: ${cause}; ${outcome}`);
}
