import type { TurnRecord } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import type { TurnJournal } from "../src/journal.js";
import { applyRecovery, defaultRecoveryPolicy, planRecovery, recoverJournal } from "../src/recovery.js";
import { createTestJournal, runningTurn } from "./helpers.js";

function turnRecord(overrides: Partial<TurnRecord>): TurnRecord {
  return {
    id: "turn-1",
    sessionId: "session-1",
    seq: 1,
    backend: "claude",
    input: { prompt: "p" },
    phase: "running",
    attempt: 1,
    effects: [],
    bridgeGeneration: 1,
    eventCount: 3,
    createdAt: "2026-11-30T12:00:00.000Z",
    updatedAt: "2026-11-30T12:00:00.000Z",
    ...overrides,
  };
}

describe("planRecovery", () => {
  test("decides each unfinished turn by phase, effects and attempt", () => {
    const decisions = planRecovery([
      turnRecord({ id: "queued", phase: "queued" }),
      turnRecord({ id: "accepted", phase: "accepted" }),
      turnRecord({ id: "thinking", phase: "running" }),
      turnRecord({ id: "spawning", phase: "spawning" }),
      turnRecord({ id: "texted", phase: "running", effects: ["assistant_text"] }),
      turnRecord({ id: "tool", phase: "running", effects: ["tool_started"] }),
      turnRecord({ id: "secret", phase: "awaiting_secret", effects: ["tool_started"] }),
      turnRecord({ id: "replayed", phase: "running", attempt: 2, replayOf: "thinking-0" }),
      turnRecord({ id: "done", phase: "completed" }),
    ]);
    expect(decisions.map(({ turn, action, reason }) => [turn.id, action, reason])).toEqual([
      ["queued", "keep", "queued"],
      ["accepted", "keep", "not_started"],
      ["thinking", "replay", "no_effects"],
      ["spawning", "replay", "no_effects"],
      ["texted", "interrupt", "has_effects"],
      ["tool", "interrupt", "has_effects"],
      ["secret", "interrupt", "has_effects"],
      ["replayed", "interrupt", "attempts_exhausted"],
    ]);
  });

  test("maxAttempts sets how often a turn without effects is replayed", () => {
    const turn = turnRecord({ attempt: 2 });
    const policy = (maxAttempts: number) => ({ ...defaultRecoveryPolicy, maxAttempts });
    expect(planRecovery([turn], policy(3))[0]?.action).toBe("replay");
    expect(planRecovery([turn], policy(2))[0]?.action).toBe("interrupt");
    expect(planRecovery([turnRecord({ attempt: 1 })], policy(1))[0]?.action).toBe("interrupt");
  });

  test("withEffects continue: every effectful call finished (or none, or only reads) continues; one unfinished asks; a loop ends", () => {
    const policy = { ...defaultRecoveryPolicy, withEffects: "continue" as const };
    const call = (toolCallId: string, done: boolean, effectFree = false) => ({
      turnId: toolCallId.split(":")[0]!,
      toolCallId,
      toolName: effectFree ? "Read" : "Bash",
      inputPreview: '{"command":"make"}',
      effectFree,
      eventIndex: 1,
      admittedAt: "2026-11-30T12:00:00.000Z",
      ...(done && { completedAt: "2026-11-30T12:00:04.000Z" }),
    });
    const calls = [
      call("finished:1", true),
      call("read:1", false, true),
      call("cut:1", true),
      call("cut:2", false),
    ];
    const decisions = planRecovery(
      [
        turnRecord({ id: "texted", effects: ["assistant_text"] }),
        turnRecord({ id: "finished", effects: ["tool_started"] }),
        turnRecord({ id: "read", effects: ["assistant_text"] }),
        turnRecord({ id: "cut", effects: ["tool_started"] }),
        turnRecord({ id: "looping", effects: ["assistant_text"], attempt: 4 }),
        turnRecord({ id: "thinking" }),
      ],
      policy,
      (turnId) => calls.filter((each) => each.turnId === turnId),
    );
    expect(decisions.map((d) => [d.turn.id, d.action, d.reason])).toEqual([
      ["texted", "continue", "calls_finished"],
      ["finished", "continue", "calls_finished"],
      ["read", "continue", "calls_finished"],
      ["cut", "ask", "may_have_run"],
      ["looping", "interrupt", "attempts_exhausted"],
      ["thinking", "replay", "no_effects"],
    ]);
    expect(decisions[3]).toMatchObject({ calls: [{ toolCallId: "cut:2" }] });
  });
});

describe("after the CLI was gone, with withEffects continue", () => {
  const policy = { ...defaultRecoveryPolicy, withEffects: "continue" as const };
  const bash = {
    toolCallId: "toolu_b",
    toolName: "Bash",
    inputPreview: '{"command":"make"}',
    effectFree: false,
  };

  test("a turn whose calls finished goes on in a continuation that tells the model so; applying again changes nothing", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    journal.gate.admitToolCall(turn.id, bash);
    journal.gate.recordToolCompletion(turn.id, bash.toolCallId);
    const [outcome] = recoverJournal(journal, policy);
    expect(outcome?.decision.action).toBe("continue");
    const continuation = outcome!.turn;
    expect(continuation).toMatchObject({ continues: turn.id, attempt: 2, phase: "accepted" });
    expect(continuation.input.prompt).toContain("Every tool call you started had finished");
    expect(journal.turns.getTurn(turn.id)).toMatchObject({
      phase: "interrupted",
      error: { code: "daemon_restarted" },
    });
    expect(journal.turns.continueTurn(turn.id, { code: "x", message: "y" }, "again").id).toBe(
      continuation.id,
    );
    expect(recoverJournal(journal, policy).map((each) => each.decision.action)).toEqual(["keep"]);
    expect(journal.maintenance.checkConsistency()).toEqual([]);
  });

  test("a call without a recorded end: the turn waits on a decision, made once; run_again and skip continue, stop does not", () => {
    const { journal } = createTestJournal();
    const asked = () => {
      const turn = runningTurn(journal);
      journal.gate.admitToolCall(turn.id, bash);
      recoverJournal(journal, policy);
      return turn;
    };
    const turn = asked();
    const waiting = journal.turns.getTurn(turn.id)!;
    expect(waiting).toMatchObject({ phase: "interrupted", error: { code: "may_have_run" } });
    expect(waiting.error?.message).toContain('Bash {"command":"make"}');
    expect(waiting.cliLostDecision).toBeUndefined();

    const decided = journal.turns.decideCliLost(turn.id, "run_again", "run it again");
    expect(decided.turn.cliLostDecision).toBe("run_again");
    expect(decided.continuation).toMatchObject({ continues: turn.id, input: { prompt: "run it again" } });
    // The same decision again: the same turns; another one: refused by name.
    expect(journal.turns.decideCliLost(turn.id, "run_again", "run it again").continuation?.id).toBe(
      decided.continuation?.id,
    );
    expect(() => journal.turns.decideCliLost(turn.id, "stop", undefined)).toThrow(
      expect.objectContaining({ code: "decision_made", message: expect.stringContaining("run_again") }),
    );

    const stopped = asked();
    expect(journal.turns.decideCliLost(stopped.id, "stop", undefined)).toEqual({
      turn: expect.objectContaining({ cliLostDecision: "stop", phase: "interrupted" }),
    });
    // Only a turn waiting on this decision takes one.
    expect(() => journal.turns.decideCliLost(decided.continuation!.id, "skip", "skip it")).toThrow(
      expect.objectContaining({ code: "invalid_transition" }),
    );
    expect(journal.maintenance.checkConsistency()).toEqual([]);
  });
});

/** A journal after a crash: one turn per situation, each in its own session. */
function crashedJournal(journal: TurnJournal) {
  const thinking = runningTurn(journal);
  journal.events.appendEvents(thinking.id, [{ type: "reasoning", text: "hmm" }]);
  const queuedBehindThinking = journal.turns.submitTurn(thinking.sessionId, { prompt: "next" });
  const texted = runningTurn(journal);
  journal.events.appendEvents(texted.id, [{ type: "assistant.text", text: "Sure, starting." }]);
  const tool = runningTurn(journal, "codex");
  journal.events.appendEvents(tool.id, [
    { type: "tool.started", toolId: "item_1", name: "command_execution", input: {} },
  ]);
  const waiting = runningTurn(journal);
  const request = journal.secrets.requestSecret(waiting.id, {
    toolCallKey: "toolu_9",
    name: "API_KEY",
    prompt: "key?",
  });
  const accepted = journal.turns.submitTurn(journal.sessions.createSession({ backend: "claude" }).id, {
    prompt: "not yet",
  });
  journal.events.flush();
  return { thinking, queuedBehindThinking, texted, tool, waiting, request, accepted };
}

describe("recoverJournal", () => {
  test("replays a turn without effects once and interrupts the rest, keeping their events", () => {
    const { journal, reopen } = createTestJournal();
    const crashed = crashedJournal(journal);
    const reopened = reopen();
    reopened.maintenance.bumpGeneration();
    const outcomes = recoverJournal(reopened);

    const byOriginal = new Map(outcomes.map((outcome) => [outcome.decision.turn.id, outcome]));
    const replay = byOriginal.get(crashed.thinking.id)?.turn;
    expect(replay).toMatchObject({
      phase: "accepted",
      attempt: 2,
      replayOf: crashed.thinking.id,
      input: crashed.thinking.input,
      sessionId: crashed.thinking.sessionId,
    });
    expect(reopened.turns.getTurn(crashed.thinking.id)).toMatchObject({
      phase: "interrupted",
      error: { code: "daemon_restarted" },
    });
    expect(reopened.events.readEvents(crashed.thinking.id).at(-1)?.event).toEqual({
      type: "terminal",
      outcome: "interrupted",
      error: expect.objectContaining({ code: "daemon_restarted" }),
      continuedBy: replay?.id,
    });
    expect(reopened.turns.getCurrentTurn(crashed.thinking.sessionId)?.id).toBe(replay?.id);
    expect(reopened.turns.getTurn(crashed.queuedBehindThinking.id)?.phase).toBe("queued");

    for (const ended of [crashed.texted, crashed.tool, crashed.waiting]) {
      const now = reopened.turns.getTurn(ended.id);
      expect(now).toMatchObject({ phase: "interrupted", error: { code: "daemon_restarted" } });
      expect(reopened.events.readEvents(ended.id).length).toBe(now?.eventCount);
    }
    expect(byOriginal.get(crashed.waiting.id)?.orphanedSecretRequests).toEqual([
      expect.objectContaining({ id: crashed.request.id, status: "orphaned" }),
    ]);
    expect(reopened.secrets.listOpenSecretRequests()).toEqual([
      expect.objectContaining({ id: crashed.request.id, name: "API_KEY", prompt: "key?" }),
    ]);
    expect(reopened.turns.getTurn(crashed.accepted.id)?.phase).toBe("accepted");
    expect(reopened.maintenance.checkConsistency()).toEqual([]);
  });

  test("running recovery again changes nothing more; a second crash of the replay interrupts it", () => {
    const { journal, reopen } = createTestJournal();
    const { thinking } = crashedJournal(journal);
    const first = recoverJournal(journal);
    const turnsAfterFirst = journal.turns.listTurns(thinking.sessionId);
    const plan = planRecovery([thinking]);
    expect(applyRecovery(journal, plan)[0]?.turn.id).toBe(
      first.find((o) => o.decision.turn.id === thinking.id)?.turn.id,
    );
    expect(journal.turns.listTurns(thinking.sessionId)).toEqual(turnsAfterFirst);

    const replayId = journal.turns.getCurrentTurn(thinking.sessionId)!.id;
    journal.turns.transition(replayId, { phase: "spawning" });
    const again = reopen();
    const second = recoverJournal(again);
    expect(second.find((outcome) => outcome.decision.turn.id === replayId)?.decision).toMatchObject({
      action: "interrupt",
      reason: "attempts_exhausted",
    });
    expect(again.turns.getTurn(replayId)).toMatchObject({
      phase: "interrupted",
      error: { code: "replay_limit" },
    });
  });

  test("the journal itself refuses to replay a turn with effects", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [{ type: "assistant.delta", text: "Hi" }]);
    expect(() => journal.turns.replayTurn(turn.id, { code: "x", message: "y" })).toThrow(
      expect.objectContaining({ code: "turn_has_effects" }),
    );
  });
});

describe("retryTurn", () => {
  test("starts a new turn with the same input; asking again returns the same retry", () => {
    const { journal, reopen } = createTestJournal();
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [{ type: "assistant.text", text: "partial" }]);
    journal.turns.transition(turn.id, {
      phase: "interrupted",
      error: { code: "daemon_restarted", message: "r" },
    });
    const retry = journal.turns.retryTurn(turn.id);
    expect(retry).toMatchObject({
      retryOf: turn.id,
      attempt: 1,
      phase: "accepted",
      input: turn.input,
      seq: 2,
    });
    expect(journal.turns.retryTurn(turn.id)).toEqual(retry);
    expect(reopen().turns.retryTurn(turn.id)).toEqual(retry);
  });

  test("queues behind an active turn and refuses unfinished or completed turns", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    expect(() => journal.turns.retryTurn(turn.id)).toThrow(
      expect.objectContaining({ code: "turn_not_retryable" }),
    );
    journal.turns.transition(turn.id, { phase: "failed", error: { code: "api_error", message: "500" } });
    const busy = journal.turns.submitTurn(turn.sessionId, { prompt: "other" });
    expect(journal.turns.retryTurn(turn.id).phase).toBe("queued");
    journal.turns.transition(busy.id, { phase: "cancelled" });
    const done = runningTurn(journal);
    journal.turns.transition(done.id, { phase: "completed" });
    expect(() => journal.turns.retryTurn(done.id)).toThrow(
      expect.objectContaining({ code: "turn_not_retryable" }),
    );
    expect(() => journal.turns.retryTurn("missing")).toThrow(
      expect.objectContaining({ code: "turn_not_found" }),
    );
  });
});
