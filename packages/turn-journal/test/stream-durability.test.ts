import { describe, expect, test } from "vitest";
import { createTestJournal, runningTurn } from "./helpers.js";

describe("stream durability", () => {
  test("a batch of stream events alone commits with streamSynchronous; effects, phases and gates with FULL", () => {
    const { journal, clock } = createTestJournal({
      batch: { maxEvents: 256, maxDelayMs: 1 },
      streamSynchronous: "NORMAL",
    });
    const turn = runningTurn(journal);
    const seen: string[] = [];
    journal.subscribe(turn.id, () => seen.push(journal.durability().synchronous));

    journal.appendEvents(turn.id, [{ type: "reasoning", text: "planning" }]);
    expect(seen).toEqual([]);
    clock.advance(1);
    expect(seen).toEqual(["NORMAL"]);
    expect(journal.durability().synchronous).toBe("FULL");

    journal.appendEvents(turn.id, [{ type: "assistant.delta", text: "first text" }]);
    expect(seen).toEqual(["NORMAL", "FULL"]);
    journal.admitToolCall(turn.id, {
      toolCallId: "c1",
      toolName: "Bash",
      inputPreview: "ls",
      effectFree: false,
    });
    journal.transition(turn.id, { phase: "completed" });
    expect(seen).toEqual(["NORMAL", "FULL", "FULL", "FULL"]);
    expect(journal.readEvents(turn.id).map((e) => e.event.type)).toContain("reasoning");
  });

  test("deferDurability: the work's commits are NORMAL, buffered events before it and commits after it FULL", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 256, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    const seen: string[] = [];
    journal.subscribe(turn.id, () => seen.push(journal.durability().synchronous));
    journal.appendEvents(turn.id, [{ type: "reasoning", text: "buffered before" }]);

    const phase = journal.deferDurability(() => {
      journal.appendEvents(turn.id, [{ type: "reasoning", text: "inside" }]);
      journal.flush();
      return journal.transition(turn.id, { phase: "interrupted" }).phase;
    });
    expect(phase).toBe("interrupted");
    expect(seen).toEqual(["FULL", "NORMAL", "NORMAL"]);
    expect(journal.durability().synchronous).toBe("FULL");

    expect(() =>
      journal.deferDurability(() => {
        throw new Error("work failed");
      }),
    ).toThrow("work failed");
    expect(journal.durability().synchronous).toBe("FULL");
  });

  test("streamSynchronous must be FULL or NORMAL", () => {
    expect(() => createTestJournal({ streamSynchronous: "OFF" as "FULL" })).toThrow(/streamSynchronous/);
  });
});
