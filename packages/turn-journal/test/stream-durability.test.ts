import Database from "better-sqlite3";
import { describe, expect, test, vi } from "vitest";
import { createTestJournal, runningTurn } from "./helpers.js";

describe("stream durability", () => {
  test("a batch of stream events alone commits with streamSynchronous; effects, phases and gates with FULL", () => {
    const { journal, clock } = createTestJournal({
      batch: { maxEvents: 256, maxDelayMs: 1 },
      streamSynchronous: "NORMAL",
    });
    const turn = runningTurn(journal);
    const seen: string[] = [];
    journal.events.subscribe(turn.id, () => seen.push(journal.maintenance.durability().synchronous));

    journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "planning" }]);
    expect(seen).toEqual([]);
    clock.advance(1);
    expect(seen).toEqual(["NORMAL"]);
    expect(journal.maintenance.durability().synchronous).toBe("FULL");

    journal.events.appendEvents(turn.id, [{ type: "assistant.delta", text: "first text" }]);
    expect(seen).toEqual(["NORMAL", "FULL"]);
    journal.gate.admitToolCall(turn.id, {
      toolCallId: "c1",
      toolName: "Bash",
      inputPreview: "ls",
      effectFree: false,
    });
    journal.turns.transition(turn.id, { phase: "completed" });
    expect(seen).toEqual(["NORMAL", "FULL", "FULL", "FULL"]);
    expect(journal.events.readEvents(turn.id).map((e) => e.event.type)).toContain("reasoning");
  });

  test("the process phases (spawning, running) and backend.started commit with streamSynchronous; the end with FULL", () => {
    const { journal } = createTestJournal({
      batch: { maxEvents: 256, maxDelayMs: 1000 },
      streamSynchronous: "NORMAL",
    });
    const turn = journal.turns.submitTurn(journal.sessions.createSession({ backend: "claude" }).id, {
      prompt: "p",
    });
    // Each `synchronous` the connection is set to, and each commit as its listeners hear it: a commit
    // runs under the mode set last before it (a mode set for one commit is restored after it).
    const log: string[] = [];
    const pragma = Database.prototype.pragma;
    const spy = vi.spyOn(Database.prototype, "pragma").mockImplementation(function (
      this: Database.Database,
      source: string,
      options?: Database.PragmaOptions,
    ) {
      const set = /^synchronous = (\w+)$/.exec(source);
      if (set) log.push(set[1] as string);
      return pragma.call(this, source, options);
    });
    journal.events.subscribe(turn.id, (_, committed) =>
      log.push(`commit ${(committed ?? []).map((envelope) => envelope.event.type).join("+")}`),
    );
    try {
      journal.turns.transition(turn.id, { phase: "spawning" });
      journal.turns.transition(turn.id, { phase: "running", process: { pid: 4242, startTime: "123456" } });
      journal.events.appendEvents(turn.id, [
        { type: "backend.started", conversationId: "c0ffee00-0000-4000-8000-000000000001" },
      ]);
      journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "buffered" }]);
      journal.turns.transition(turn.id, { phase: "completed" });
    } finally {
      spy.mockRestore();
    }
    expect(log).toEqual([
      ...["NORMAL", "FULL", "commit phase"],
      ...["NORMAL", "FULL", "commit phase"],
      ...["NORMAL", "commit backend.started", "FULL"],
      // The buffered event goes first, at NORMAL; the end commits FULL and fsyncs both.
      ...["NORMAL", "commit reasoning", "FULL", "commit terminal"],
    ]);
  });

  test("a journal whose streams commit FULL commits the process phases FULL too", () => {
    const { journal } = createTestJournal();
    const turn = journal.turns.submitTurn(journal.sessions.createSession({ backend: "claude" }).id, {
      prompt: "p",
    });
    const seen: string[] = [];
    journal.events.subscribe(turn.id, () => seen.push(journal.maintenance.durability().synchronous));
    journal.turns.transition(turn.id, { phase: "spawning" });
    journal.turns.transition(turn.id, { phase: "running", process: { pid: 4242, startTime: "123456" } });
    expect(seen).toEqual(["FULL", "FULL"]);
  });

  test("deferDurability: the work's commits are NORMAL, buffered events before it and commits after it FULL", () => {
    const { journal } = createTestJournal({ batch: { maxEvents: 256, maxDelayMs: 1000 } });
    const turn = runningTurn(journal);
    const seen: string[] = [];
    journal.events.subscribe(turn.id, () => seen.push(journal.maintenance.durability().synchronous));
    journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "buffered before" }]);

    const phase = journal.maintenance.deferDurability(() => {
      journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "inside" }]);
      journal.events.flush();
      return journal.turns.transition(turn.id, { phase: "interrupted" }).phase;
    });
    expect(phase).toBe("interrupted");
    expect(seen).toEqual(["FULL", "NORMAL", "NORMAL"]);
    expect(journal.maintenance.durability().synchronous).toBe("FULL");

    expect(() =>
      journal.maintenance.deferDurability(() => {
        throw new Error("work failed");
      }),
    ).toThrow("work failed");
    expect(journal.maintenance.durability().synchronous).toBe("FULL");
  });

  test("deferDurability on a NORMAL-stream journal: the buffered events before it commit NORMAL too", () => {
    const { journal } = createTestJournal({
      batch: { maxEvents: 256, maxDelayMs: 1000 },
      streamSynchronous: "NORMAL",
    });
    const turn = runningTurn(journal);
    const seen: string[] = [];
    journal.events.subscribe(turn.id, () => seen.push(journal.maintenance.durability().synchronous));
    journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "buffered before" }]);
    journal.maintenance.deferDurability(() => journal.turns.transition(turn.id, { phase: "completed" }));
    // The end of a turn the daemon records this way: no fsync on its thread, for the events either.
    expect(seen).toEqual(["NORMAL", "NORMAL"]);
    expect(journal.maintenance.durability().synchronous).toBe("FULL");
  });

  test("streamSynchronous must be FULL or NORMAL", () => {
    expect(() => createTestJournal({ streamSynchronous: "OFF" as "FULL" })).toThrow(/streamSynchronous/);
  });
});
