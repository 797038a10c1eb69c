import { describe, expect, test } from "vitest";
import { createTestJournal, failNextEventOfType, runningTurn } from "./helpers.js";

// A kept CLI's stdout position after its last journaled line (issue 31): a daemon that adopts the CLI
// after a restart reads on from there, so it is committed in the transaction of that line's events.
describe("stdoutThrough", () => {
  test("commits with the events of the line it follows, and only with them", () => {
    const { journal, path } = createTestJournal();
    const turn = runningTurn(journal);
    expect(journal.turns.getTurn(turn.id)?.stdoutThrough).toBeUndefined();
    const before = journal.turns.getTurn(turn.id)!.eventCount;

    // The first text proves an effect: it commits at once.
    journal.events.appendEvents(turn.id, [{ type: "assistant.delta", text: "a" }], 10);
    expect(journal.turns.getTurn(turn.id)).toMatchObject({ stdoutThrough: 10, eventCount: before + 1 });
    // Buffered, not committed: readers see neither the event nor its position.
    journal.events.appendEvents(turn.id, [{ type: "assistant.delta", text: "b" }], 25);
    expect(journal.turns.getTurn(turn.id)).toMatchObject({ stdoutThrough: 10, eventCount: before + 1 });
    journal.events.flush();
    expect(journal.turns.getTurn(turn.id)).toMatchObject({ stdoutThrough: 25, eventCount: before + 2 });

    // Events with no position (a CLI not kept) leave it as it was.
    journal.events.appendEvents(turn.id, [{ type: "assistant.delta", text: "c" }]);
    journal.events.flush();
    expect(journal.turns.getTurn(turn.id)).toMatchObject({ stdoutThrough: 25, eventCount: before + 3 });

    // A batch whose insert fails commits neither its events nor its position.
    const restore = failNextEventOfType(path, "reasoning");
    journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "hm" }], 40);
    expect(() => journal.events.flush()).toThrow(/injected failure/);
    restore();
    expect(journal.turns.getTurn(turn.id)).toMatchObject({ stdoutThrough: 25, eventCount: before + 3 });
  });

  test("a position that is not a non-negative integer is refused, naming it", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const before = journal.turns.getTurn(turn.id)!.eventCount;
    for (const through of [-1, 1.5, Number.NaN]) {
      expect(() =>
        journal.events.appendEvents(turn.id, [{ type: "assistant.delta", text: "a" }], through),
      ).toThrow(/through: must be a non-negative integer/);
    }
    expect(journal.turns.getTurn(turn.id)).toMatchObject({ eventCount: before });
  });
});
