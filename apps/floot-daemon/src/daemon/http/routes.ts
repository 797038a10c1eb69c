import type { IncomingMessage, ServerResponse } from "node:http";
import { codexConfinementKeys } from "@bridgeworks/backend-adapters";
import {
  type Backend,
  CliLostDecisionRequest,
  CreateSessionRequest,
  type DecisionActor,
  type FlootCliLostDecided,
  type FlootDaemonStatus,
  type FlootEventPage,
  type FlootSessionOptions,
  SendTurnRequest,
  SubmitSecretRequest,
} from "@bridgeworks/protocol";
import { describeError, type Logger, sendJson as send } from "@bridgeworks/runtime";
import { cliLostNote, type TurnJournal, unfinishedCalls } from "@bridgeworks/turn-journal";
import type { MomentSource } from "../moments.js";
import type { PermissionBroker } from "../permission-broker.js";
import type { SandboxStatus } from "../sandbox-status.js";
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

/** What the dispatcher found out about a request before its handler runs. */
export interface RequestContext {
  /** For a route that `decides`: who made the request. */
  actor?: DecisionActor;
}

export interface Route {
  method: Method;
  pattern: RegExp;
  handler: (
    request: IncomingMessage,
    response: ServerResponse,
    params: string[],
    context: RequestContext,
  ) => Promise<void>;
  /** Only with the API token: never with the web UI's page token. */
  tokenOnly?: boolean;
  /**
   * The request decides what runs (as said here: "allow or deny a tool call"): its maker is identified
   * first, and a process of a running turn is refused.
   */
  decides?: string;
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
  /** Whether each backend's sandbox can run here: a confined session is refused where it cannot. */
  sandboxStatus: SandboxStatus;
  /** What `/v1/changes` also sends: approvals and secrets asked, turns ended. */
  moments?: MomentSource;
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
  sandboxStatus,
  moments,
}: RouteDeps): Route[] {
  const requireSession = (id: string) => {
    const session = journal.sessions.getSession(id);
    if (!session) throw new ApiError("not_found", `session ${id} does not exist`);
    return session;
  };
  const requireTurn = (id: string) => {
    const turn = journal.turns.getTurn(id);
    if (!turn) throw new ApiError("not_found", `turn ${id} does not exist`);
    return turn;
  };
  const openPermissionRequests = (sessionId: string) =>
    journal.permissions.listOpenPermissionRequests(sessionId).map((request) => permissions.present(request));
  const lists = { journal, sessions, status, openPermissionRequests, slices, ...(moments && { moments }) };
  const changes = new SessionChangeHub(lists);

  return [
    { method: "GET", pattern: /^\/v1\/status$/, handler: async (_q, r) => send(r, 200, status()) },
    {
      method: "POST",
      pattern: /^\/v1\/ui\/login-codes$/,
      tokenOnly: true,
      decides: "sign a browser in",
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
      decides: "create a session",
      handler: async (q, r) => {
        const { backend, ...options } = await readBody(q, CreateSessionRequest);
        await checkConfinement(backend, options, sandboxStatus);
        const record = journal.sessions.createSession({ backend });
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
      handler: async (_q, r, [id]) =>
        send(r, 200, { turns: journal.turns.listTurns(requireSession(id!).id) }),
    },
    {
      method: "POST",
      pattern: /^\/v1\/sessions\/([^/]+)\/turns$/,
      decides: "send a turn",
      handler: async (q, r, [id]) => {
        const input = await readBody(q, SendTurnRequest);
        // Ten submitted at once go a few per turn of the loop, the reads that wait between them. No
        // fsync of its own on the loop: the turns accepted meanwhile share one on the thread pool,
        // and neither the answer nor the CLI comes before the accept is on disk.
        await slices.turn();
        const turn = journal.maintenance.deferDurability(() =>
          journal.turns.submitTurn(requireSession(id!).id, input),
        );
        try {
          await journal.maintenance.sync();
        } catch (error) {
          throw withdrawUnsynced(journal, turn.id, error, logger);
        }
        await slices.turn();
        coordinator.kick(turn.sessionId);
        send(r, 202, journal.turns.getTurn(turn.id));
      },
    },
    {
      method: "GET",
      pattern: /^\/v1\/sessions\/([^/]+)\/current-turn$/,
      handler: async (_q, r, [id]) => {
        const turn = journal.turns.getCurrentTurn(requireSession(id!).id);
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
        const events = journal.events.readEvents(turn.id, from);
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
      decides: "retry a turn",
      handler: async (_q, r, [id]) => {
        const retry = journal.turns.retryTurn(requireTurn(id!).id);
        coordinator.kick(retry.sessionId);
        send(r, 202, journal.turns.getTurn(retry.id));
      },
    },
    {
      method: "POST",
      pattern: /^\/v1\/turns\/([^/]+)\/cli-lost-decision$/,
      decides: "decide on a tool call that may have run",
      handler: async (q, r, [id]) => {
        const { decision } = await readBody(q, CliLostDecisionRequest);
        const turn = requireTurn(id!);
        const calls = unfinishedCalls(journal.gate.listToolAdmissions(turn.id));
        const note = decision === "stop" ? undefined : cliLostNote({ kind: decision, calls });
        const decided: FlootCliLostDecided = journal.turns.decideCliLost(turn.id, decision, note);
        if (decided.continuation) coordinator.kick(decided.continuation.sessionId);
        send(r, 200, decided);
      },
    },
    {
      method: "GET",
      pattern: /^\/v1\/secret-requests$/,
      handler: async (_q, r) => send(r, 200, { requests: journal.secrets.listOpenSecretRequests() }),
    },
    {
      method: "POST",
      pattern: /^\/v1\/secret-requests\/([^/]+)\/submit$/,
      decides: "answer a secret request",
      handler: async (q, r, [id], { actor }) => {
        const { value } = await readBody(q, SubmitSecretRequest);
        send(r, 200, secrets.submit(id!, value, actor!));
      },
    },
  ];
}

/**
 * A session is confined unless its creator says otherwise, and only where its backend's sandbox runs:
 * elsewhere creation is refused with why and how to go on unconfined. A confined Codex session's
 * `codexConfig` may not replace the sandbox Floot configures.
 */
async function checkConfinement(
  backend: Backend,
  options: FlootSessionOptions,
  sandboxStatus: SandboxStatus,
): Promise<void> {
  if (options.sandbox?.enabled === false) return;
  (options.codexConfig ?? []).forEach((override, index) => {
    const key = override.slice(0, override.indexOf("="));
    const taken = codexConfinementKeys.find((name) => key === name || key.startsWith(`${name}.`));
    if (taken !== undefined)
      throw new ApiError(
        "invalid_body",
        `codexConfig.${index}: ${taken} is set by Floot's sandbox in a confined session; create the session unconfined to set it yourself`,
        { field: `codexConfig.${index}` },
      );
  });
  const status = (await sandboxStatus())[backend];
  if (!status.available)
    throw new ApiError(
      "sandbox_unavailable",
      `${backend}'s sandbox cannot run here: ${status.problem ?? "unavailable"}. To run this session's commands without a sandbox, create it unconfined (floot session create --unconfined)`,
      { field: "sandbox" },
    );
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
    const phase = journal.turns.getTurn(turnId)?.phase;
    if (phase === "queued" || phase === "accepted") {
      const to = phase === "queued" ? "cancelled" : "failed";
      journal.maintenance.deferDurability(() =>
        journal.turns.transition(turnId, { phase: to, error: reason }),
      );
    } else {
      outcome = `it is ${phase} already`;
    }
  } catch (withdrawal) {
    outcome = `withdrawing it failed too (${describeError(withdrawal)})`;
  }
  logger.error("turn not accepted: journal sync failed", { turn: turnId, error: cause, outcome });
  return new ApiError("internal", `turn ${turnId} not accepted: ${cause}; ${outcome}`);
}
