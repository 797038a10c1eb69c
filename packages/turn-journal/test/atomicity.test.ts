import { afterEach, describe, expect, test } from "vitest";
import {
  createTestJournal,
  eventTypes,
  expectContiguous,
  failNextEventOfType,
  runningTurn,
} from "./helpers.js";

let heal: (() => void) | undefined;
afterEach(() => {
  heal?.();
  heal = undefined;
});

describe("a phase change is one transaction with its event and secret changes", () => {
  test("a failure while recording awaiting_secret leaves no request, no event, no effect", () => {
    const { journal, path } = createTestJournal();
    const turn = runningTurn(journal);
    const before = journal.turns.getTurn(turn.id);
    heal = failNextEventOfType(path, "phase");
    expect(() =>
      journal.secrets.requestSecret(turn.id, { toolCallKey: "k", name: "TOKEN", prompt: "p" }),
    ).toThrow("injected failure");
    expect(journal.turns.getTurn(turn.id)).toEqual(before);
    expect(journal.secrets.listSecretRequests(turn.id)).toEqual([]);
    heal();
    heal = undefined;
    journal.secrets.requestSecret(turn.id, { toolCallKey: "k", name: "TOKEN", prompt: "p" });
    expect(journal.turns.getTurn(turn.id)?.phase).toBe("awaiting_secret");
    expectContiguous(journal, turn.id);
    expect(journal.maintenance.checkConsistency()).toEqual([]);
  });

  test("a failure while ending a turn keeps its secret requests pending and its cause event unwritten", () => {
    const { journal, path } = createTestJournal();
    const turn = runningTurn(journal);
    const request = journal.secrets.requestSecret(turn.id, { toolCallKey: "k", name: "TOKEN", prompt: "p" });
    const before = journal.turns.getTurn(turn.id);
    heal = failNextEventOfType(path, "terminal");
    expect(() =>
      journal.turns.transition(turn.id, {
        phase: "interrupted",
        cause: { type: "assistant.text", text: "partial answer" },
        error: { code: "daemon_restarted", message: "restart" },
      }),
    ).toThrow("injected failure");
    expect(journal.turns.getTurn(turn.id)).toEqual(before);
    expect(journal.secrets.getSecretRequest(request.id)?.status).toBe("pending");
    expect(eventTypes(journal, turn.id)).not.toContain("assistant.text");
    expect(journal.maintenance.checkConsistency()).toEqual([]);
  });

  test("a failed phase change does not lose stream events buffered before it", () => {
    const { journal, path } = createTestJournal({ batch: { maxEvents: 1000, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "kept" }]);
    heal = failNextEventOfType(path, "terminal");
    expect(() => journal.turns.transition(turn.id, { phase: "completed" })).toThrow("injected failure");
    expect(eventTypes(journal, turn.id).at(-1)).toBe("reasoning");
    heal();
    heal = undefined;
    journal.turns.transition(turn.id, { phase: "completed" });
    expect(eventTypes(journal, turn.id).slice(-2)).toEqual(["reasoning", "terminal"]);
  });

  test("a failed flush keeps its events buffered, then commits them once with contiguous indexes", () => {
    const { journal, path } = createTestJournal({ batch: { maxEvents: 3, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    heal = failNextEventOfType(path, "usage");
    journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "a" }]);
    expect(() =>
      journal.events.appendEvents(turn.id, [
        { type: "reasoning", text: "b" },
        { type: "usage", input: 1, output: 1 },
      ]),
    ).toThrow("injected failure");
    expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(turn.eventCount);
    heal();
    heal = undefined;
    journal.events.flush();
    expect(eventTypes(journal, turn.id).slice(turn.eventCount)).toEqual(["reasoning", "reasoning", "usage"]);
    expectContiguous(journal, turn.id);
  });

  test("a failed replay neither ends the old turn nor creates the new one", () => {
    const { journal, path } = createTestJournal();
    const turn = runningTurn(journal);
    heal = failNextEventOfType(path, "terminal");
    expect(() => journal.turns.replayTurn(turn.id, { code: "daemon_restarted", message: "restart" })).toThrow(
      "injected failure",
    );
    expect(journal.turns.listTurns(turn.sessionId)).toEqual([journal.turns.getTurn(turn.id)]);
    expect(journal.turns.getTurn(turn.id)?.phase).toBe("running");
  });
});

test("a timer flush that fails is reported, and its events stay buffered for the next flush", () => {
  const errors: unknown[] = [];
  const { journal, path, clock } = createTestJournal({
    batch: { maxEvents: 1000, maxDelayMs: 50 },
    onError: (error) => errors.push(error),
  });
  const turn = runningTurn(journal);
  heal = failNextEventOfType(path, "reasoning");
  journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "a" }]);
  clock.advance(50);
  expect(errors).toEqual([expect.objectContaining({ message: "injected failure" })]);
  heal();
  heal = undefined;
  journal.events.flush();
  expect(eventTypes(journal, turn.id).at(-1)).toBe("reasoning");
});
