import { expect, test } from "vitest";
import { SlicedQueue } from "../src/daemon/http/sliced-queue.js";

const nextTurnOfTheLoop = () => new Promise((resolve) => setImmediate(resolve));

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
  let loopTurn = 0;
  let counting = true;
  const count = () => {
    loopTurn += 1;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  const ran: { task: number; turn: number }[] = [];
  for (let task = 0; task < 10; task += 1) queue.run(() => ran.push({ task, turn: loopTurn }));
  expect(ran).toEqual([]);
  await drained(queue);
  counting = false;

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
