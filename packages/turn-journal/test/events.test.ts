import type { BackendEvent, TurnEventEnvelope } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { systemClock } from "../src/clock.js";
import { followTurn } from "../src/follow.js";
import { createTestJournal, eventTypes, expectContiguous, runningTurn } from "./helpers.js";

const reasoning = (text: string): BackendEvent => ({ type: "reasoning", text });

describe("appendEvents batching", () => {
  test("stream events stay invisible until the batch is full, then commit with contiguous indexes", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 4, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    const before = turn.eventCount;
    journal.events.appendEvents(turn.id, [reasoning("a"), reasoning("b")]);
    journal.events.appendEvents(turn.id, [reasoning("c")]);
    expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(before);
    journal.events.appendEvents(turn.id, [reasoning("d")]);
    expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(before + 4);
    expect(
      journal.events.readEvents(turn.id, before).map((envelope) => [envelope.index, envelope.event]),
    ).toEqual([
      [before, reasoning("a")],
      [before + 1, reasoning("b")],
      [before + 2, reasoning("c")],
      [before + 3, reasoning("d")],
    ]);
  });

  test("a batch commits once its oldest event is maxDelayMs old, by timer or by the next append", () => {
    const { journal, clock } = createTestJournal({ batch: { maxEvents: 1000, maxDelayMs: 50 } });
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [reasoning("a")]);
    clock.advance(49);
    expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(turn.eventCount);
    clock.advance(1);
    expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(turn.eventCount + 1);
    expect(clock.pendingTimers).toBe(0);

    // A tight loop never lets a timer run: the age check on the next append commits instead.
    journal.events.appendEvents(turn.id, [reasoning("b")]);
    clock.skip(60);
    journal.events.appendEvents(turn.id, [reasoning("c")]);
    expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(turn.eventCount + 3);
  });

  test("maxDelayMs 0: what one turn of the loop appends commits once, when that turn's I/O is done", () => {
    const { journal, clock } = createTestJournal({ batch: { maxEvents: 1000, maxDelayMs: 0 } });
    const turn = runningTurn(journal);
    let commits = 0;
    journal.events.subscribe(turn.id, () => (commits += 1));
    journal.events.appendEvents(turn.id, [reasoning("a")]);
    // However long the turn of the loop runs, no append commits on its own: the whole turn's do, once.
    clock.skip(20);
    journal.events.appendEvents(turn.id, [reasoning("b")]);
    journal.events.appendEvents(turn.id, [reasoning("c")]);
    expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(turn.eventCount);
    clock.advance(0);
    expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(turn.eventCount + 3);
    expect(commits).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  test("maxDelayMs 0 on the system clock commits before an immediate queued after the append", async () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 1000, maxDelayMs: 0 }, clock: systemClock });
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [reasoning("a")]);
    expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(turn.eventCount);
    const seen = await new Promise((resolve) =>
      setImmediate(() => resolve(journal.turns.getTurn(turn.id)?.eventCount)),
    );
    expect(seen).toBe(turn.eventCount + 1);
  });

  test("an event proving a new effect commits at once with everything buffered before it", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 1000, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [reasoning("thinking")]);
    journal.events.appendEvents(turn.id, [{ type: "assistant.delta", text: "Hel" }]);
    expect(journal.turns.getTurn(turn.id)).toMatchObject({
      effects: ["assistant_text"],
      eventCount: turn.eventCount + 2,
    });
    // Same effect again: nothing new to prove, so it is batched.
    journal.events.appendEvents(turn.id, [{ type: "assistant.delta", text: "lo" }]);
    expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(turn.eventCount + 2);
    journal.events.appendEvents(turn.id, [
      { type: "tool.started", toolId: "toolu_1", name: "Bash", input: { command: "ls" } },
    ]);
    expect(journal.turns.getTurn(turn.id)).toMatchObject({
      effects: ["assistant_text", "tool_started"],
      eventCount: turn.eventCount + 4,
    });
    expect(eventTypes(journal, turn.id).slice(-4)).toEqual([
      "reasoning",
      "assistant.delta",
      "assistant.delta",
      "tool.started",
    ]);
  });

  test("backend.started commits at once and becomes the turn's and session's conversation", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 1000, maxDelayMs: 1000 } });
    const turn = runningTurn(journal, "codex");
    journal.events.appendEvents(turn.id, [{ type: "backend.started", conversationId: "thread-019a" }]);
    expect(journal.turns.getTurn(turn.id)?.conversationId).toBe("thread-019a");
    expect(journal.sessions.getSession(turn.sessionId)?.conversationId).toBe("thread-019a");
  });

  test("a phase change flushes buffered events first, so they keep their order before it", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 1000, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [
      reasoning("a"),
      { type: "usage", input: 10, output: 3, costUsd: 0.001 },
    ]);
    journal.turns.transition(turn.id, { phase: "completed" });
    expect(eventTypes(journal, turn.id).slice(-3)).toEqual(["reasoning", "usage", "terminal"]);
    expectContiguous(journal, turn.id);
  });

  test("interleaved turns keep contiguous indexes of their own through many batches", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 7, maxDelayMs: 1000 } });
    const first = runningTurn(journal);
    const second = runningTurn(journal, "codex");
    let firstCount = 0;
    for (let index = 0; index < 200; index += 1) {
      const toSecond = index % 3 === 0 && index <= 120;
      journal.events.appendEvents(toSecond ? second.id : first.id, [reasoning(`r${index}`)]);
      if (!toSecond) firstCount += 1;
      if (index === 120) journal.turns.transition(second.id, { phase: "completed" });
    }
    journal.events.flush();
    expect(expectContiguous(journal, first.id)).toBe(first.eventCount + firstCount);
    expectContiguous(journal, second.id);
    expect(journal.maintenance.checkConsistency()).toEqual([]);
  });

  test("a batch longer than one INSERT statement (64 rows) commits whole, in order", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 1000, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    const texts = Array.from({ length: 150 }, (_, index) => `r${index}`);
    for (const text of texts) journal.events.appendEvents(turn.id, [reasoning(text)]);
    journal.events.flush();
    expect(expectContiguous(journal, turn.id)).toBe(turn.eventCount + texts.length);
    const stored = journal.events.readEvents(turn.id, turn.eventCount, 1000).map(({ event }) => event);
    expect(stored).toEqual(texts.map(reasoning));
    expect(journal.maintenance.checkConsistency()).toEqual([]);
  });

  test("refuses journal-owned events, bad events and turns that take no events", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    expect(() =>
      journal.events.appendEvents(turn.id, [
        { type: "terminal", outcome: "completed" } as unknown as BackendEvent,
      ]),
    ).toThrow(/events\[0\]\.type/);
    expect(() =>
      journal.events.appendEvents(turn.id, [
        reasoning("ok"),
        { type: "usage", input: -1, output: 0 } as BackendEvent,
      ]),
    ).toThrow(/events\[1\]\.input/);
    expect(journal.maintenance.checkConsistency()).toEqual([]);
    expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(turn.eventCount);
    const accepted = journal.turns.submitTurn(journal.sessions.createSession({ backend: "claude" }).id, {
      prompt: "x",
    });
    expect(() => journal.events.appendEvents(accepted.id, [reasoning("early")])).toThrow(
      expect.objectContaining({ code: "not_accepting_events" }),
    );
    journal.turns.transition(turn.id, { phase: "completed" });
    expect(() => journal.events.appendEvents(turn.id, [reasoning("late")])).toThrow(
      expect.objectContaining({ code: "not_accepting_events" }),
    );
  });
});

describe("reading", () => {
  test("readEvents starts at any index and pages by limit", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 1, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    for (let index = 0; index < 10; index += 1)
      journal.events.appendEvents(turn.id, [reasoning(`r${index}`)]);
    const total = turn.eventCount + 10;
    for (let from = 0; from <= total; from += 1) {
      const events = journal.events.readEvents(turn.id, from);
      expect(events.map((envelope) => envelope.index)).toEqual(
        Array.from({ length: total - from }, (_, offset) => from + offset),
      );
    }
    expect(journal.events.readEvents(turn.id, 5, 2).map((envelope) => envelope.index)).toEqual([5, 6]);
    expect(journal.events.readEvents(turn.id, total + 10)).toEqual([]);
    expect(journal.events.readEvents("missing")).toEqual([]);
    expect(() => journal.events.readEvents(turn.id, -1)).toThrow(/fromIndex/);
    expect(() => journal.events.readEvents(turn.id, 0, 0)).toThrow(/limit/);
  });

  test("subscribers are woken after each commit to their turn, not before", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 2, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    const other = runningTurn(journal);
    const seen: number[] = [];
    const unsubscribe = journal.events.subscribe(turn.id, (turnId) =>
      seen.push(journal.turns.getTurn(turnId)?.eventCount ?? -1),
    );
    journal.events.appendEvents(turn.id, [reasoning("a")]);
    expect(seen).toEqual([]);
    journal.events.appendEvents(turn.id, [reasoning("b")]);
    journal.events.appendEvents(other.id, [reasoning("c"), reasoning("d")]);
    expect(seen).toEqual([turn.eventCount + 2]);
    unsubscribe();
    journal.turns.transition(turn.id, { phase: "completed" });
    expect(seen).toHaveLength(1);
  });

  test("a subscriber that throws is reported and does not undo the commit", () => {
    const errors: unknown[] = [];
    const { journal } = createTestJournal({ onError: (error) => errors.push(error) });
    const turn = runningTurn(journal);
    journal.events.subscribe(turn.id, () => {
      throw new Error("follower bug");
    });
    journal.turns.transition(turn.id, { phase: "completed" });
    expect(errors).toEqual([new Error("follower bug")]);
    expect(journal.turns.getTurn(turn.id)?.phase).toBe("completed");
  });

  test("followTurn replays from any index, then tails live without gap or duplicate, and ends at terminal", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 3, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    for (let index = 0; index < 5; index += 1)
      journal.events.appendEvents(turn.id, [reasoning(`early ${index}`)]);
    const delivered: TurnEventEnvelope[] = [];
    const follower = followTurn(journal.events, turn.id, 2, (events) => delivered.push(...events), {
      pageSize: 2,
    });
    const replayed = delivered.length;
    expect(replayed).toBeGreaterThan(0);
    for (let index = 0; index < 7; index += 1)
      journal.events.appendEvents(turn.id, [reasoning(`live ${index}`)]);
    // A second follower attaching mid-turn (a refreshed UI) sees the same sequence from 0.
    const refreshed: TurnEventEnvelope[] = [];
    followTurn(journal.events, turn.id, 0, (events) => refreshed.push(...events));
    journal.turns.transition(turn.id, { phase: "completed" });
    expect(follower.closed).toBe(true);
    expect(delivered.map((envelope) => envelope.index)).toEqual(
      Array.from({ length: delivered.length }, (_, offset) => offset + 2),
    );
    expect(delivered.at(-1)?.event.type).toBe("terminal");
    expect(refreshed).toEqual(journal.events.readEvents(turn.id));
    expect(delivered).toEqual(journal.events.readEvents(turn.id, 2));
  });

  test("followTurn with pause replays a page per step, then tails live without gap or duplicate", async () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 1, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    for (let index = 0; index < 25; index += 1)
      journal.events.appendEvents(turn.id, [reasoning(`early ${index}`)]);
    const stored = journal.events.readEvents(turn.id).length;
    const pauses: (() => void)[] = [];
    const pause = () => new Promise<void>((resolve) => pauses.push(resolve));
    const delivered: TurnEventEnvelope[] = [];
    const follower = followTurn(journal.events, turn.id, 0, (events) => delivered.push(...events), {
      pageSize: 10,
      pause,
    });
    // One page, then it waits: commits made meanwhile are not delivered out of order.
    expect(delivered.length).toBe(10);
    expect(pauses.length).toBe(1);
    journal.events.appendEvents(turn.id, [reasoning("during the replay")]);
    expect(delivered.length).toBe(10);
    const goOn = async () => {
      pauses.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    };
    await goOn();
    expect(delivered.length).toBe(20);
    await goOn();
    // The rest, the commit made during the pause included; caught up, it follows live again.
    expect(delivered.length).toBe(stored + 1);
    expect(pauses.length).toBe(0);
    journal.events.appendEvents(turn.id, [reasoning("live")]);
    journal.turns.transition(turn.id, { phase: "completed" });
    expect(follower.closed).toBe(true);
    expect(delivered).toEqual(journal.events.readEvents(turn.id));
  });

  test("followTurn ends when its pause rejects or it was closed during one", async () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 1, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    for (let index = 0; index < 6; index += 1)
      journal.events.appendEvents(turn.id, [reasoning(`early ${index}`)]);
    const rejected: TurnEventEnvelope[] = [];
    const refused = followTurn(journal.events, turn.id, 0, (events) => rejected.push(...events), {
      pageSize: 2,
      pause: () => Promise.reject(new Error("the client went away")),
    });
    let resume = () => {};
    const closedEarly: TurnEventEnvelope[] = [];
    const closed = followTurn(journal.events, turn.id, 0, (events) => closedEarly.push(...events), {
      pageSize: 2,
      pause: () => new Promise<void>((resolve) => (resume = resolve)),
    });
    closed.close();
    resume();
    await new Promise((resolve) => setImmediate(resolve));
    journal.events.appendEvents(turn.id, [reasoning("after")]);
    expect(refused.closed).toBe(true);
    expect(rejected.map((envelope) => envelope.index)).toEqual([0, 1]);
    expect(closedEarly.map((envelope) => envelope.index)).toEqual([0, 1]);
  });

  test("followTurn survives an onEvents that itself commits to the turn", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 1, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    const indexes: number[] = [];
    let echoed = false;
    followTurn(journal.events, turn.id, 0, (events) => {
      indexes.push(...events.map((envelope) => envelope.index));
      if (!echoed) {
        echoed = true;
        journal.events.appendEvents(turn.id, [reasoning("echo")]);
      }
    });
    journal.turns.transition(turn.id, { phase: "completed" });
    expect(indexes).toEqual(journal.events.readEvents(turn.id).map((envelope) => envelope.index));
  });
});
