import type { DecisionActor, TurnEventEnvelope } from "@bridgeworks/protocol";
import Database from "better-sqlite3";
import { describe, expect, test } from "vitest";
import { applyRecovery, defaultRecoveryPolicy, planRecovery } from "../src/recovery.js";
import { WaitingSessions } from "../src/waiting-sessions.js";
import { createTestJournal, runningTurn } from "./helpers.js";

const person: DecisionActor = { via: "socket", peer: { pid: 4242, uid: 1000, executable: "/usr/bin/node" } };

const permission = (key: string) => ({
  toolCallKey: key,
  toolName: "Bash",
  inputSummary: `touch ${key}`,
  inputDigest: "a".repeat(64),
  unmatchedRules: [],
});

describe("sessions waiting on a person", () => {
  test("each once, at its oldest open request of either kind, the longest waiting first, in keyset pages", () => {
    const { journal, clock } = createTestJournal();
    // Ten sessions with a running turn; a few of them ask, a second apart, in this order:
    const turns = Array.from({ length: 10 }, () => runningTurn(journal));
    const ask = (index: number, kind: "permission" | "secret", key: string) => {
      clock.skip(1000);
      const turnId = turns[index]!.id;
      return kind === "permission"
        ? journal.permissions.requestPermission(turnId, permission(key))
        : journal.secrets.requestSecret(turnId, { toolCallKey: key, name: "TOKEN", prompt: "the token" });
    };
    const first = ask(7, "secret", "a");
    ask(2, "permission", "b");
    ask(7, "permission", "c"); // session 7 again: it waits since its secret
    const fourth = ask(5, "permission", "d");
    ask(9, "secret", "e");
    const sessionOf = (index: number) => turns[index]!.sessionId;

    const ids = (page: { sessions: { session: { id: string } }[] }) => page.sessions.map((s) => s.session.id);
    const all = journal.sessions.listWaitingSessionPage();
    expect(ids(all)).toEqual([7, 2, 5, 9].map(sessionOf));
    expect(all.sessions[0]!.since).toBe(first.createdAt);
    expect(all.nextCursor).toBeUndefined();

    // Two at a time: the same sessions, each once.
    const firstPage = journal.sessions.listWaitingSessionPage({ limit: 2 });
    expect(ids(firstPage)).toEqual([7, 2].map(sessionOf));
    const second = journal.sessions.listWaitingSessionPage({ limit: 2, cursor: firstPage.nextCursor! });
    expect(ids(second)).toEqual([5, 9].map(sessionOf));
    expect(second.nextCursor).toBeUndefined();

    // Answered requests leave; session 7 then waits since its approval, session 5 no longer waits.
    journal.secrets.resolveSecretRequest(first.id, "submitted");
    journal.permissions.decidePermissionRequest(fourth.id, { behavior: "deny" }, person);
    expect(ids(journal.sessions.listWaitingSessionPage())).toEqual([2, 7, 9].map(sessionOf));
    // A turn interrupted by a restart leaves its requests orphaned: still waiting on a person.
    journal.turns.transition(turns[9]!.id, { phase: "interrupted" });
    expect(ids(journal.sessions.listWaitingSessionPage())).toEqual([2, 7, 9].map(sessionOf));
    // One that is cancelled cancels them: no longer waiting.
    journal.turns.transition(turns[2]!.id, { phase: "cancelled" });
    expect(ids(journal.sessions.listWaitingSessionPage())).toEqual([7, 9].map(sessionOf));

    expect(() => journal.sessions.listWaitingSessionPage({ cursor: "nope" })).toThrow(
      /cursor: not a cursor of a page of waiting sessions/,
    );
    expect(() => journal.sessions.listWaitingSessionPage({ limit: 0 })).toThrow(/limit/);
  });

  test("a turn whose call may have run waits on a decision: listed at its end, among requests, until decided or moved past", () => {
    const { journal, clock } = createTestJournal();
    const policy = { ...defaultRecoveryPolicy, withEffects: "continue" as const };
    const asking = runningTurn(journal);
    clock.skip(1000);
    const cut = [runningTurn(journal), runningTurn(journal), runningTurn(journal)];
    for (const [index, turn] of cut.entries())
      journal.gate.admitToolCall(turn.id, {
        toolCallId: `toolu_${index}`,
        toolName: "Bash",
        inputPreview: '{"command":"make"}',
        effectFree: false,
      });
    clock.skip(1000);
    journal.permissions.requestPermission(asking.id, permission("p"));
    clock.skip(1000);
    // The asking turn's session runs on; the other three are cut: each waits on a decision.
    const callsOf = (turnId: string) => journal.gate.listToolAdmissions(turnId);
    const unfinished = cut.map((turn) => journal.turns.getTurn(turn.id)!);
    applyRecovery(journal, planRecovery(unfinished, policy, callsOf));
    const ids = () => journal.sessions.listWaitingSessionPage().sessions.map((each) => each.session.id);
    const decisionSince = journal.turns.getTurn(cut[0]!.id)!.endedAt;
    expect(journal.sessions.listWaitingSessionPage().sessions[1]?.since).toBe(decisionSince);
    expect(ids()).toEqual([asking.sessionId, ...cut.map((turn) => turn.sessionId)]);
    const paged = journal.sessions.listWaitingSessionPage({ limit: 2 });
    expect(
      journal.sessions
        .listWaitingSessionPage({ limit: 2, cursor: paged.nextCursor! })
        .sessions.map((each) => each.session.id),
    ).toEqual([cut[1]!.sessionId, cut[2]!.sessionId]);

    // Decided: no longer waiting. Moved past (a new turn sent in its session): neither.
    journal.turns.decideCliLost(cut[0]!.id, "skip", "skip it");
    journal.turns.submitTurn(cut[1]!.sessionId, { prompt: "something else" });
    expect(ids()).toEqual([asking.sessionId, cut[2]!.sessionId]);
  });

  test("a page reads the partial indexes of what is open from its cursor on, merged in order, never a scan", () => {
    const { journal, path } = createTestJournal();
    runningTurn(journal);
    journal.maintenance.close();
    const db = new Database(path, { readonly: true });
    try {
      const plan = (
        db.prepare(`EXPLAIN QUERY PLAN ${WaitingSessions.sql}`).all(0, "", 0, "", 0, "", 1) as {
          detail: string;
        }[]
      ).map((row) => row.detail);
      // Each side reads what is open from the cursor on, in order; the three are merged, not sorted.
      expect(plan).toContain("MERGE (UNION ALL)");
      expect(plan.filter((step) => /^SEARCH [pst] /.test(step))).toEqual([
        "SEARCH p USING INDEX permission_requests_open_since ((created_at,id)>(?,?))",
        "SEARCH s USING INDEX secret_requests_open_since ((created_at,id)>(?,?))",
        "SEARCH t USING INDEX turns_awaiting_decision ((ended_at,id)>(?,?))",
      ]);
      // The older-request checks are lookups of one session's open requests and undecided turns.
      const ofSession = [
        "SEARCH o USING INDEX permission_requests_open_of_session (session_id=? AND created_at<?)",
        "SEARCH o USING INDEX secret_requests_open (session_id=? AND created_at<?)",
        "SEARCH o USING INDEX turns_awaiting_decision_of_session (session_id=? AND ended_at<?)",
      ];
      expect(plan.filter((step) => step.startsWith("SEARCH o"))).toEqual([
        ...ofSession,
        ...ofSession,
        ...ofSession,
      ]);
      // "Still its session's latest turn" is a lookup of that session's later turns.
      expect(plan.filter((step) => step.startsWith("SEARCH later")).length).toBeGreaterThan(0);
      expect(
        plan
          .filter((step) => step.startsWith("SEARCH later"))
          .every((step) => step.includes("(session_id=? AND seq>?)")),
      ).toBe(true);
      expect(plan.filter((step) => step.startsWith("SCAN"))).toEqual([]);
      expect(plan.some((step) => step.includes("TEMP B-TREE"))).toBe(false);
    } finally {
      db.close();
    }
  });
});

describe("every turn's committed events", () => {
  test("a listener hears each commit's events once, after the commit, and none that rolled back", () => {
    const { journal } = createTestJournal();
    const heard: [string, string[]][] = [];
    const stop = journal.events.subscribeAll((turnId, committed: readonly TurnEventEnvelope[]) =>
      heard.push([turnId, committed.map((envelope) => envelope.event.type)]),
    );
    const turn = runningTurn(journal);
    journal.permissions.requestPermission(turn.id, permission("k"));
    journal.permissions.requestPermission(turn.id, permission("k")); // the same call again: nothing new
    expect(() => journal.turns.transition(turn.id, { phase: "queued" as never })).toThrow();
    journal.turns.transition(turn.id, { phase: "completed" });
    stop();
    journal.sessions.createSession({ backend: "claude" });
    expect(heard.filter(([id]) => id === turn.id).map(([, types]) => types)).toEqual([
      ["phase"],
      ["phase"],
      ["phase"],
      ["permission.requested"],
      ["permission.resolved", "terminal"],
    ]);
  });
});
