import {
  DecisionActor,
  JournalId,
  type SecretRequest,
  SecretRequestDraft,
  SecretResolution,
} from "@bridgeworks/protocol";
import { JournalError, parseInput } from "./errors.js";
import { JournalArea } from "./journal-area.js";
import {
  bridgeGeneration,
  requireSecretRequest,
  requireSecretRequestRow,
  requireTurnRow,
} from "./records.js";
import { toSecretRequest } from "./rows.js";

const openSecretStatuses = new Set(["pending", "orphaned"]);

/** Secret requests: metadata only (there is no parameter for a value), asked by a running turn, answered by a human. */
export class JournalSecrets extends JournalArea {
  /**
   * Records that a running turn asks a human for a secret: the request (metadata only: there is no
   * parameter for a value), its `secret.requested` event and the move to `awaiting_secret` commit together.
   * The same tool call (`toolCallKey`) asking again gets the same request back.
   */
  requestSecret(turnId: string, draft: SecretRequestDraft): SecretRequest {
    const valid = parseInput(SecretRequestDraft, draft, "draft");
    const connection = this.connection;
    const { sql, clock } = connection;
    this.buffer.flush();
    const requestId = connection.transaction(() => {
      const existing = sql.secretRequestByToolCall.get(turnId, valid.toolCallKey);
      if (existing) return existing.id;
      const turn = requireTurnRow(connection, turnId);
      if (turn.phase !== "running" && turn.phase !== "awaiting_secret") {
        throw new JournalError(
          "invalid_transition",
          `turn ${turnId} is ${turn.phase}; only a running turn can request a secret`,
        );
      }
      const id = JournalId.parse(connection.newId());
      const now = clock.now();
      // The row keeps the prompt as the event shows it.
      const event = this.writes.prepare({ type: "secret.requested" as const, requestId: id, ...valid });
      sql.insertSecretRequest.run({
        id,
        turn_id: turnId,
        session_id: turn.session_id,
        tool_call_key: valid.toolCallKey,
        name: valid.name,
        prompt: event.prompt,
        status: "pending",
        bridge_generation: bridgeGeneration(connection),
        created_at: now,
        updated_at: now,
        resolved_at: null,
        submitted_by: null,
      });
      this.writes.changeTurn(turn, { phase: "awaiting_secret", events: [event] });
      return id;
    });
    connection.feed.notify([turnId]);
    return requireSecretRequest(connection, requestId);
  }

  /**
   * Records the answer to a pending or orphaned request. For a pending one, its `secret.resolved` event
   * commits with it and the turn returns to `running` once none of its requests is pending. The secret
   * itself stays with the caller. Resolving again to the same status is a no-op. `by`: who answered, for
   * a submission (the actor is journaled with it).
   */
  resolveSecretRequest(requestId: string, resolution: SecretResolution, by?: DecisionActor): SecretRequest {
    const status = parseInput(SecretResolution, resolution, "resolution");
    const actor = by === undefined ? undefined : parseInput(DecisionActor, by, "by");
    const connection = this.connection;
    const { sql, clock, feed } = connection;
    this.buffer.flush();
    const touched = connection.transaction(() => {
      const request = requireSecretRequestRow(connection, requestId);
      if (request.status === status) return [];
      if (!openSecretStatuses.has(request.status)) {
        throw new JournalError(
          "secret_request_closed",
          `secret request ${requestId} is already ${request.status}; cannot mark it ${status}`,
        );
      }
      const now = clock.now();
      const byJson = actor === undefined ? null : JSON.stringify(actor);
      sql.resolveSecretRequest.run(status, now, now, byJson, requestId);
      feed.sessionChanged(request.session_id);
      if (request.status === "orphaned") return [];
      const turn = requireTurnRow(connection, request.turn_id);
      const stillPending = sql.pendingSecretRequestsOfTurn.all(turn.id).length > 0;
      this.writes.changeTurn(turn, {
        ...(turn.phase === "awaiting_secret" && !stillPending && { phase: "running" }),
        events: [{ type: "secret.resolved", requestId, status, ...(actor !== undefined && { by: actor }) }],
      });
      return [turn.id];
    });
    feed.notify(touched);
    return requireSecretRequest(connection, requestId);
  }

  getSecretRequest(requestId: string): SecretRequest | undefined {
    const row = this.connection.sql.secretRequest.get(requestId);
    return row && toSecretRequest(row);
  }

  listSecretRequests(turnId: string): SecretRequest[] {
    return this.connection.sql.secretRequestsOfTurn.all(turnId).map(toSecretRequest);
  }

  /** Requests a human can still answer (pending or orphaned): what the UI shows again after a restart. */
  listOpenSecretRequests(sessionId?: string): SecretRequest[] {
    const { sql } = this.connection;
    const rows =
      sessionId === undefined ? sql.openSecretRequests.all() : sql.openSecretRequestsOfSession.all(sessionId);
    return rows.map(toSecretRequest);
  }
}
