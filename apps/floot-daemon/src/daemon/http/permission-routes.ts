import {
  AllowPermissionRequest,
  DenyPermissionRequest,
  type FlootPermissionRequestList,
  type FlootSessionRules,
  RemoveSessionRuleRequest,
} from "@bridgeworks/protocol";
import { sendJson as send } from "@bridgeworks/runtime";
import { JournalError, type TurnJournal } from "@bridgeworks/turn-journal";
import type { PermissionBroker } from "../permission-broker.js";
import { ruleRunsAnyCode } from "../permission-rules.js";
import { sessionRulesOf } from "../session-adapter.js";
import type { SessionStore } from "../session-store.js";
import { readBody } from "./body.js";
import type { Route } from "./routes.js";

export interface PermissionRouteDeps {
  journal: TurnJournal;
  permissions: PermissionBroker;
  sessions: SessionStore;
}

/** How many requests `GET /v1/permission-requests?all` shows, newest first. */
const recentRequestsShown = 200;

/** Permission requests (list, one, allow, deny) and each session's rules (list, remove). */
export function permissionRoutes({ journal, permissions, sessions }: PermissionRouteDeps): Route[] {
  const rulesOf = (sessionId: string): FlootSessionRules => ({
    rules: journal.listSessionRules(sessionId),
    runAnyCode: sessionRulesOf(sessionId, sessions, journal).filter(ruleRunsAnyCode),
  });
  return [
    {
      method: "GET",
      pattern: /^\/v1\/permission-requests$/,
      handler: async (q, r) => {
        // `?all`: the newest requests whatever their status, each decided one with who decided.
        const all = new URL(q.url ?? "/", "http://x").searchParams.has("all");
        const requests = all
          ? journal.listRecentPermissionRequests(recentRequestsShown)
          : journal.listOpenPermissionRequests();
        const list: FlootPermissionRequestList = {
          requests: requests.map((request) => permissions.present(request)),
        };
        send(r, 200, list);
      },
    },
    {
      method: "GET",
      pattern: /^\/v1\/permission-requests\/([^/]+)$/,
      handler: async (_q, r, [id]) => {
        const request = journal.getPermissionRequest(id!);
        if (!request) {
          throw new JournalError("permission_request_not_found", `permission request ${id} does not exist`);
        }
        send(r, 200, permissions.present(request));
      },
    },
    {
      method: "POST",
      pattern: /^\/v1\/permission-requests\/([^/]+)\/allow$/,
      decides: "allow a tool call",
      handler: async (q, r, [id], { actor }) => {
        const { scope, rule, shownDigest } = await readBody(q, AllowPermissionRequest);
        const decision = { behavior: "allow" as const, scope, ...(rule !== undefined && { rule }) };
        send(r, 200, permissions.decide(id!, decision, actor!, shownDigest));
      },
    },
    {
      method: "POST",
      pattern: /^\/v1\/permission-requests\/([^/]+)\/deny$/,
      decides: "deny a tool call",
      handler: async (q, r, [id], { actor }) => {
        const { message, shownDigest } = await readBody(q, DenyPermissionRequest);
        const decision = { behavior: "deny" as const, ...(message !== undefined && { message }) };
        send(r, 200, permissions.decide(id!, decision, actor!, shownDigest));
      },
    },
    {
      method: "GET",
      pattern: /^\/v1\/sessions\/([^/]+)\/rules$/,
      handler: async (_q, r, [id]) => send(r, 200, rulesOf(id!)),
    },
    {
      method: "POST",
      pattern: /^\/v1\/sessions\/([^/]+)\/rules\/remove$/,
      decides: "change a session's rules",
      handler: async (q, r, [id]) => {
        const { rule } = await readBody(q, RemoveSessionRuleRequest);
        journal.removeSessionRule(id!, rule);
        send(r, 200, rulesOf(id!));
      },
    },
  ];
}
