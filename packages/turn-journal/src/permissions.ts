import {
  DecisionActor,
  JournalId,
  PermissionDecision,
  type PermissionRequest,
  PermissionRequestDraft,
  PermissionRule,
  type TurnEvent,
} from "@bridgeworks/protocol";
import { JournalError, parseInput } from "./errors.js";
import { JournalArea } from "./journal-area.js";
import { toPermissionRequest } from "./permission-rows.js";
import { acceptsEvents } from "./phases.js";
import { requirePermissionRequest, requirePermissionRow, requireSession, requireTurnRow } from "./records.js";

type PermissionResolved = Extract<TurnEvent, { type: "permission.resolved" }>;

/**
 * Permission requests (Claude Code's permission prompt): asked by a live turn, decided by a human,
 * applied to the call once; and the session rules "allow for this session" adds.
 */
export class JournalPermissions extends JournalArea {
  /**
   * Records that Claude Code asks whether a call of a live turn may run: the request and its
   * `permission.requested` event commit together. The same call asking again gets the same request.
   */
  requestPermission(turnId: string, draft: PermissionRequestDraft): PermissionRequest {
    const valid = parseInput(PermissionRequestDraft, draft, "draft");
    const connection = this.connection;
    const { permissionSql, clock, feed } = connection;
    this.buffer.flush();
    const requestId = connection.transaction(() => {
      const existing = permissionSql.byToolCall.get(turnId, valid.toolCallKey);
      if (existing) return existing.id;
      const turn = requireTurnRow(connection, turnId);
      if (!acceptsEvents(turn.phase)) {
        throw new JournalError(
          "not_accepting_events",
          `turn ${turnId} is ${turn.phase}; only a live turn can ask for permission`,
        );
      }
      const id = JournalId.parse(connection.newId());
      const { toolName, inputSummary, unmatchedRules, suggestedRule } = valid;
      // The row keeps the call, the rules and the suggestion as the event shows them.
      const event = this.writes.prepare({
        type: "permission.requested" as const,
        requestId: id,
        toolName,
        inputSummary,
        unmatchedRules,
        ...(suggestedRule !== undefined && { suggestedRule }),
      });
      permissionSql.insert.run({
        id,
        turn_id: turnId,
        session_id: turn.session_id,
        tool_call_key: valid.toolCallKey,
        tool_name: toolName,
        input_summary: event.inputSummary,
        input_digest: valid.inputDigest,
        unmatched_rules: JSON.stringify(event.unmatchedRules),
        suggested_rule: event.suggestedRule ?? "",
        now: clock.now(),
      });
      this.writes.changeTurn(turn, { events: [event] });
      feed.sessionChanged(turn.session_id);
      return id;
    });
    feed.notify([turnId]);
    return requirePermissionRequest(connection, requestId);
  }

  /**
   * Records a human's decision on a pending or orphaned request; "allow for this session" adds its rule
   * to the session in the same transaction. The decision is applied later (`applyPermissionDecision`).
   * `by`: who decided, journaled with the decision and its `permission.resolved` event.
   */
  decidePermissionRequest(
    requestId: string,
    decision: PermissionDecision,
    by: DecisionActor,
  ): PermissionRequest {
    const valid = parseInput(PermissionDecision, decision, "decision");
    const actor = parseInput(DecisionActor, by, "by");
    if (valid.behavior === "allow" && valid.scope === "session" && valid.rule === undefined) {
      throw new JournalError("invalid_input", "decision.rule: allowing for the session needs a rule");
    }
    const connection = this.connection;
    const { permissionSql, clock, feed } = connection;
    this.buffer.flush();
    const touched = connection.transaction(() => {
      const request = requirePermissionRow(connection, requestId);
      if (request.status !== "pending" && request.status !== "orphaned") {
        throw new JournalError(
          "permission_request_closed",
          `permission request ${requestId} is already ${request.status}`,
        );
      }
      const now = clock.now();
      const status = valid.behavior === "allow" ? "allowed" : "denied";
      const rule = valid.behavior === "allow" && valid.scope === "session" ? valid.rule : undefined;
      // The decision, its rule and message are kept as its event shows them, written or not (an ended turn).
      const event = this.writes.prepare<PermissionResolved>({
        type: "permission.resolved",
        requestId,
        status,
        ...(rule !== undefined && { rule }),
        ...(valid.behavior === "deny" && valid.message !== undefined && { message: valid.message }),
        by: actor,
      });
      const decisionRule = valid.behavior === "allow" ? valid.rule : undefined;
      const shownRule =
        decisionRule === undefined || rule !== undefined
          ? event.rule
          : this.#ruleAsShown(requestId, status, decisionRule);
      const kept: PermissionDecision =
        valid.behavior === "allow"
          ? { ...valid, ...(shownRule !== undefined && { rule: shownRule }) }
          : { ...valid, ...(event.message !== undefined && { message: event.message }) };
      permissionSql.decide.run(status, JSON.stringify(kept), now, now, JSON.stringify(actor), requestId);
      if (event.rule !== undefined) permissionSql.addRule.run(request.session_id, event.rule, now);
      feed.sessionChanged(request.session_id);
      return this.#resolvedOnTurn(request.turn_id, event);
    });
    feed.notify(touched);
    return requirePermissionRequest(connection, requestId);
  }

  /**
   * Marks a decision as having reached a call of `turnId` (the one that asked, or its retry's identical
   * call), with a `permission.resolved` `applied` event on that turn. Once: a second apply is refused.
   */
  applyPermissionDecision(requestId: string, turnId: string): PermissionRequest {
    const connection = this.connection;
    const { permissionSql, clock, feed } = connection;
    this.buffer.flush();
    const touched = connection.transaction(() => {
      const request = requirePermissionRow(connection, requestId);
      const now = clock.now();
      if (request.decision === null || permissionSql.apply.run(now, now, requestId).changes !== 1) {
        throw new JournalError(
          "permission_request_closed",
          `permission request ${requestId} is ${request.applied_at !== null ? "already applied" : request.status}`,
        );
      }
      return this.#resolvedOnTurn(turnId, { type: "permission.resolved", requestId, status: "applied" });
    });
    feed.notify(touched);
    return requirePermissionRequest(connection, requestId);
  }

  /** A decided request of the session, not yet applied, for the same tool and input. */
  findUnappliedPermissionDecision(
    sessionId: string,
    toolName: string,
    inputDigest: string,
  ): PermissionRequest | undefined {
    const row = this.connection.permissionSql.unapplied.get(sessionId, toolName, inputDigest);
    return row && toPermissionRequest(row);
  }

  /** A pending request nobody decided in time (the session's timeout): `expired`, final. */
  expirePermissionRequest(requestId: string): PermissionRequest {
    const connection = this.connection;
    const { permissionSql, clock, feed } = connection;
    this.buffer.flush();
    const touched = connection.transaction(() => {
      const request = requirePermissionRow(connection, requestId);
      if (request.status !== "pending") return [];
      permissionSql.setStatus.run("expired", clock.now(), requestId);
      feed.sessionChanged(request.session_id);
      return this.#resolvedOnTurn(request.turn_id, {
        type: "permission.resolved",
        requestId,
        status: "expired",
      });
    });
    feed.notify(touched);
    return requirePermissionRequest(connection, requestId);
  }

  getPermissionRequest(requestId: string): PermissionRequest | undefined {
    const row = this.connection.permissionSql.byId.get(requestId);
    return row && toPermissionRequest(row);
  }

  /** Requests a human can still decide (pending or orphaned), oldest first; of one session if named. */
  listOpenPermissionRequests(sessionId?: string): PermissionRequest[] {
    const { permissionSql } = this.connection;
    const rows =
      sessionId === undefined ? permissionSql.open.all() : permissionSql.openOfSession.all(sessionId);
    return rows.map(toPermissionRequest);
  }

  /** The `limit` newest requests whatever their status (decided ones with who decided), newest first. */
  listRecentPermissionRequests(limit: number): PermissionRequest[] {
    return this.connection.permissionSql.recent.all(limit).map(toPermissionRequest);
  }

  /** The rules "allow for this session" added, in the order they were added. */
  listSessionRules(sessionId: string): string[] {
    requireSession(this.connection, sessionId);
    return this.connection.permissionSql.rules.all(sessionId);
  }

  /** Removes a session rule; later turns no longer get it. Removing a rule that is not there is a no-op. */
  removeSessionRule(sessionId: string, rule: string): string[] {
    const valid = parseInput(PermissionRule, rule, "rule");
    this.connection.transaction(() => {
      requireSession(this.connection, sessionId);
      this.connection.permissionSql.removeRule.run(sessionId, valid);
    });
    return this.listSessionRules(sessionId);
  }

  /** A request's `permission.resolved` event, written on its turn while the turn takes events; the turns touched. */
  #resolvedOnTurn(turnId: string, event: PermissionResolved): string[] {
    const turn = requireTurnRow(this.connection, turnId);
    if (!acceptsEvents(turn.phase)) return [];
    this.writes.changeTurn(turn, { events: [event] });
    return [turn.id];
  }

  /** A rule allowed once, kept with the decision but shown by no event: as such an event would show it. */
  #ruleAsShown(requestId: string, status: PermissionResolved["status"], rule: string): string | undefined {
    return this.writes.prepare<PermissionResolved>({ type: "permission.resolved", requestId, status, rule })
      .rule;
  }
}
