import { type DecisionActor, PermissionRequest, type PermissionRequestDraft } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { createTestJournal, eventTypes, runningTurn } from "./helpers.js";

/** A person at the CLI, as the daemon identifies one. */
const person: DecisionActor = { via: "socket", peer: { pid: 4242, uid: 1000, executable: "/usr/bin/node" } };

const draft: PermissionRequestDraft = {
  toolCallKey: "toolu_01A",
  toolName: "Bash",
  inputSummary: "npm test",
  inputDigest: "a".repeat(64),
  unmatchedRules: ["Read"],
  suggestedRule: "Bash(npm:*)",
};

describe("permission requests", () => {
  test("a request and its event commit together, with the tool_started effect; the same call gets it back", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const request = journal.requestPermission(turn.id, draft);
    expect(PermissionRequest.parse(request)).toMatchObject({ ...draft, status: "pending", turnId: turn.id });
    expect(journal.requestPermission(turn.id, draft)).toEqual(request);
    expect(journal.getTurn(turn.id)).toMatchObject({ phase: "running", effects: ["tool_started"] });
    expect(eventTypes(journal, turn.id).at(-1)).toBe("permission.requested");
    expect(journal.listOpenPermissionRequests().map((r) => r.id)).toEqual([request.id]);
    expect(journal.checkConsistency()).toEqual([]);
  });

  test("a decision is applied once; allow for the session adds its rule", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const request = journal.requestPermission(turn.id, draft);
    expect(() =>
      journal.decidePermissionRequest(request.id, { behavior: "allow", scope: "session" }, person),
    ).toThrow(/needs a rule/);
    const decided = journal.decidePermissionRequest(
      request.id,
      {
        behavior: "allow",
        scope: "session",
        rule: "Bash(npm test:*)",
      },
      person,
    );
    expect(decided).toMatchObject({
      status: "allowed",
      decision: { rule: "Bash(npm test:*)" },
      decidedBy: person,
    });
    const resolved = journal.readEvents(turn.id).find((each) => each.event.type === "permission.resolved");
    expect(resolved?.event).toMatchObject({ status: "allowed", by: person });
    expect(journal.listRecentPermissionRequests(10)).toEqual([journal.getPermissionRequest(request.id)]);
    expect(journal.listSessionRules(turn.sessionId)).toEqual(["Bash(npm test:*)"]);
    expect(() => journal.decidePermissionRequest(request.id, { behavior: "deny" }, person)).toThrow(
      /already allowed/,
    );
    expect(journal.findUnappliedPermissionDecision(turn.sessionId, "Bash", draft.inputDigest)?.id).toBe(
      request.id,
    );
    expect(journal.applyPermissionDecision(request.id, turn.id).appliedAt).toBeDefined();
    expect(() => journal.applyPermissionDecision(request.id, turn.id)).toThrow(/already applied/);
    expect(
      journal.findUnappliedPermissionDecision(turn.sessionId, "Bash", draft.inputDigest),
    ).toBeUndefined();
    expect(eventTypes(journal, turn.id).slice(-2)).toEqual(["permission.resolved", "permission.resolved"]);
    expect(journal.removeSessionRule(turn.sessionId, "Bash(npm test:*)")).toEqual([]);
    expect(() => journal.removeSessionRule(turn.sessionId, "Bash(a) rm")).toThrow(/rule/);
    expect(journal.checkConsistency()).toEqual([]);
  });

  test("an interrupted turn orphans its pending request; any other end cancels it", () => {
    const { journal } = createTestJournal();
    const first = runningTurn(journal);
    const orphan = journal.requestPermission(first.id, draft);
    journal.transition(first.id, { phase: "interrupted" });
    expect(journal.getPermissionRequest(orphan.id)?.status).toBe("orphaned");
    expect(journal.listOpenPermissionRequests().map((r) => r.id)).toEqual([orphan.id]);
    // Still decidable: its decision waits for the retry's identical call.
    journal.decidePermissionRequest(orphan.id, { behavior: "deny", message: "no" }, person);
    expect(journal.getPermissionRequest(orphan.id)).toMatchObject({
      status: "denied",
      decision: { message: "no" },
    });

    const second = runningTurn(journal);
    const cancelled = journal.requestPermission(second.id, { ...draft, toolCallKey: "toolu_02" });
    journal.transition(second.id, { phase: "completed" });
    expect(journal.getPermissionRequest(cancelled.id)?.status).toBe("cancelled");
    expect(() => journal.decidePermissionRequest(cancelled.id, { behavior: "deny" }, person)).toThrow(
      /cancelled/,
    );
    expect(journal.listOpenPermissionRequests()).toEqual([]);
    expect(journal.checkConsistency()).toEqual([]);
  });

  test("a request may suggest no rule, and keeps a whole multi-line call with escaped rule parentheses", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const shown = `python3 - <<'EOF'\n${"print(1)\n".repeat(500)}EOF`;
    const { suggestedRule: _, ...withoutRule } = draft;
    const request = journal.requestPermission(turn.id, { ...withoutRule, inputSummary: shown });
    expect(request).not.toHaveProperty("suggestedRule");
    expect(request.inputSummary).toBe(shown);
    const event = journal.readEvents(turn.id, 0, 10_000).at(-1)?.event;
    expect(event).toMatchObject({ type: "permission.requested", inputSummary: shown });
    expect(event).not.toHaveProperty("suggestedRule");
    const rule = 'Bash(python3 -c "print\\(6\\*7\\)")';
    journal.decidePermissionRequest(request.id, { behavior: "allow", scope: "session", rule }, person);
    expect(journal.listSessionRules(turn.sessionId)).toEqual([rule]);
    expect(journal.checkConsistency()).toEqual([]);
  });

  test("a session's list hears each request asked, decided or expired; the open list is per session too", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const other = runningTurn(journal);
    const heard: string[] = [];
    journal.subscribeSessionChanges((id) => heard.push(id));
    const asked = journal.requestPermission(turn.id, draft);
    const waiting = journal.requestPermission(other.id, draft);
    expect(heard).toEqual([turn.sessionId, other.sessionId]);
    expect(journal.listOpenPermissionRequests(turn.sessionId).map((r) => r.id)).toEqual([asked.id]);
    expect(journal.listOpenPermissionRequests(other.sessionId).map((r) => r.id)).toEqual([waiting.id]);
    journal.decidePermissionRequest(asked.id, { behavior: "deny" }, person);
    journal.expirePermissionRequest(waiting.id);
    expect(heard).toEqual([turn.sessionId, other.sessionId, turn.sessionId, other.sessionId]);
    expect(journal.listOpenPermissionRequests(turn.sessionId)).toEqual([]);
    expect(journal.getPermissionRequest(waiting.id)?.status).toBe("expired");
  });
});
