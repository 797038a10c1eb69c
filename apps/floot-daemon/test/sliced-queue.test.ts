import { expect, test } from "vitest";
import { SlicedQueue } from "../src/daemon/http/sliced-queue.js";

const nextTurnOfTheLoop = () => new Promise((resolve) => setImmediate(resolve));

/** Counts the turns of the event loop (an immediate that queues itself) until stopped. */
function countLoopTurns(): { turn(): number; stop(): void } {
  let turns = 0;
  let counting = true;
  const count = () => {
    turns += 1;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  return {
    turn: () => turns,
    stop: () => {
      counting = false;
    },
  };
}

/** Turns the loop until the queue has run everything (at most 1,000 turns). */
async function drained(queue: SlicedQueue): Promise<void> {
  await nextTurnOfTheLoop();
  for (let turns = 0; queue.waiting > 0; turns += 1) {
    if (turns > 1_000) throw new Error(`${queue.waiting} tasks still waiting after 1,000 turns of the loop`);
    await nextTurnOfTheLoop();
  }
}

test("tasks run in arrival order, after the current turn, one slice of the clock per turn of the loop", async () => {
  // Each reading of this clock is half a millisecond later: with the slice at 2 ms, four tasks fit one.
  let clock = 0;
  const queue = new SlicedQueue({ sliceMs: 2, now: () => (clock += 0.5), onError: () => {} });
  const loop = countLoopTurns();
  const ran: { task: number; turn: number }[] = [];
  for (let task = 0; task < 10; task += 1) queue.run(() => ran.push({ task, turn: loop.turn() }));
  expect(ran).toEqual([]);
  await drained(queue);
  loop.stop();

  expect(ran.map(({ task }) => task)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  const perTurn = new Map<number, number>();
  for (const { turn } of ran) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
  expect([...perTurn.values()]).toEqual([4, 4, 2]);
  expect(new Set(perTurn.keys()).size).toBe(3);
});

test("a task that throws is reported and the rest still run", async () => {
  const errors: unknown[] = [];
  const queue = new SlicedQueue({ sliceMs: 100, onError: (error) => errors.push(error) });
  const ran: number[] = [];
  queue.run(() => ran.push(1));
  queue.run(() => {
    throw new Error("this start failed");
  });
  queue.run(() => ran.push(3));
  await drained(queue);
  expect(ran).toEqual([1, 3]);
  expect(errors).toEqual([new Error("this start failed")]);
});

test("what a caller does after `turn()` counts toward the slice: steps of long work share the loop", async () => {
  // The clock moves only with the callers' own work: a step is 1 ms, the slice 2 ms.
  let clock = 0;
  const queue = new SlicedQueue({ sliceMs: 2, now: () => clock, onError: () => {} });
  const loop = countLoopTurns();
  const steps: { caller: string; turn: number }[] = [];
  const longWork = async (caller: string, stepCount: number) => {
    for (let step = 0; step < stepCount; step += 1) {
      await queue.turn();
      clock += 1;
      steps.push({ caller, turn: loop.turn() });
    }
  };
  // Four callers waiting at once: each one's step runs after it is let through, not in the grant.
  const done = Promise.all([longWork("a", 2), longWork("b", 1), longWork("c", 1), longWork("d", 2)]);
  const plain: number[] = [];
  queue.run(() => plain.push(loop.turn()));
  await done;
  await drained(queue);
  loop.stop();

  // In the order they asked: a, b, c, d, the plain task, then a and d again.
  expect(steps.map(({ caller }) => caller)).toEqual(["a", "b", "c", "d", "a", "d"]);
  const perTurn = new Map<number, number>();
  for (const { turn } of steps) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
  expect([...perTurn.values()]).toEqual([2, 2, 2]);
  expect(plain).toHaveLength(1);
  expect(plain[0]).toBe(steps[4]!.turn);
});
