import {
  type ActiveAgent,
  type AgentIdentity,
  type AgentRecord,
  parseAgentIdentity,
} from "@bridgeworks/protocol";
import { argumentError, BoardError } from "../errors.js";
import { type ActionRow, agentFromRow } from "../rows.js";
import type { Lookup } from "../store.js";

// The reads that explain a refusal, shared by every part of the core.

export function actionNotFound(id: string): BoardError {
  return new BoardError("action_not_found", `no action ${id} on this board`);
}

export function requireAction(found: Lookup, id: string): ActionRow {
  if (found.action === undefined) throw actionNotFound(id);
  return found.action;
}

export function requireAgent(found: Lookup, identity: string, argument: string): AgentRecord {
  if (found.agent === undefined) {
    throw new BoardError("agent_not_found", `${argument}: ${identity} is not registered on this board`, {
      argument,
    });
  }
  return agentFromRow(found.agent);
}

/** Whether the looked-up identity's lease has lapsed by the store's clock, swept or not. */
export function leaseLapsed(found: Lookup): boolean {
  return found.agentLeaseExpiresInMs !== undefined && found.agentLeaseExpiresInMs <= 0;
}

/** An identity counts as active while its status says so and its lease, if any, holds. */
export function requireActive(found: Lookup, identity: AgentIdentity, argument: string): ActiveAgent {
  const record = requireAgent(found, identity, argument);
  if (record.status !== "active") {
    throw new BoardError("agent_not_active", `${argument}: ${identity} is ${record.status}`, { argument });
  }
  if (leaseLapsed(found)) {
    throw new BoardError(
      "agent_not_active",
      `${argument}: ${identity} is no longer active: its lease lapsed (its process did not renew it in time)`,
      { argument },
    );
  }
  return record;
}

export function requireSuccessor(
  found: Lookup,
  successor: AgentIdentity,
  retiring: AgentIdentity,
): ActiveAgent {
  const record = requireActive(found, successor, "successor");
  if (successor === retiring || record.name !== parseAgentIdentity(retiring).name) {
    throw argumentError(
      "successor",
      `must be another active identity of ${parseAgentIdentity(retiring).name}`,
    );
  }
  return record;
}

/** Settles with `operation`, or rejects at once when `signal` aborts (its reason) or the board closes. */
export function abortable<T>(
  operation: Promise<T>,
  signal: AbortSignal | undefined,
  closing: AbortSignal,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal?.reason);
    const onClosing = () => reject(new BoardError("closed", "the board was closed during the wait"));
    signal?.addEventListener("abort", onAbort, { once: true });
    closing.addEventListener("abort", onClosing, { once: true });
    operation.then(resolve, reject).finally(() => {
      signal?.removeEventListener("abort", onAbort);
      closing.removeEventListener("abort", onClosing);
    });
  });
}
