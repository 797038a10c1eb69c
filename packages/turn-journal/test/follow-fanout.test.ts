import type { TurnEventEnvelope } from "@bridgeworks/protocol";
import { expect, test } from "vitest";
import { followTurn } from "../src/follow.js";
import { createTestJournal, runningTurn } from "./helpers.js";

test("live followers get each commit's own events, without reading the journal again", () => {
  const { journal } = createTestJournal({ batch: { maxEvents: 1, maxDelayMs: 50 } });
  const turn = runningTurn(journal);
  let reads = 0;
  const source = {
    readEvents: (...args: Parameters<typeof journal.events.readEvents>) => {
      reads += 1;
      return journal.events.readEvents(...args);
    },
    subscribe: journal.events.subscribe.bind(journal.events),
  };
  const followers = Array.from({ length: 10 }, () => {
    const seen: TurnEventEnvelope[] = [];
    followTurn(source, turn.id, 0, (events) => seen.push(...events));
    return seen;
  });
  const readsAfterReplay = reads;
  for (let i = 0; i < 50; i += 1)
    journal.events.appendEvents(turn.id, [{ type: "reasoning", text: `step ${i}` }]);
  journal.turns.transition(turn.id, { phase: "completed" });
  expect(reads).toBe(readsAfterReplay);
  const stored = journal.events.readEvents(turn.id, 0, 1000);
  for (const seen of followers) expect(JSON.parse(JSON.stringify(seen))).toEqual(stored);
});
