import { expect, test } from "vitest";
import { CliStartSlots, type StartSlot } from "../src/daemon/cli-start-slots.js";

/** Timers that fire only when the test says so. */
function manualTimers() {
  const pending: { callback: () => void; ms: number }[] = [];
  return {
    setTimeout: (callback: () => void, ms: number) => {
      pending.push({ callback, ms });
      return {};
    },
    pending,
    fireAll: () => {
      for (const timer of pending.splice(0)) timer.callback();
    },
  };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

/** Takes a slot and records when it was granted. */
function taker(slots: CliStartSlots, name: string, granted: string[], signal?: AbortSignal) {
  return slots.take(signal).then((slot) => {
    granted.push(name);
    return slot;
  });
}

test("no more than `limit` starts hold a slot; the rest get one in the order they asked", async () => {
  const timers = manualTimers();
  const slots = new CliStartSlots({ limit: 2, holdMs: 2_000, setTimeout: timers.setTimeout });
  const granted: string[] = [];
  const taken = ["a", "b", "c", "d", "e"].map((name) => taker(slots, name, granted));
  await settled();
  expect(granted).toEqual(["a", "b"]);
  expect([slots.taken, slots.waiting]).toEqual([2, 3]);

  (await taken[1]!).release();
  await settled();
  expect(granted).toEqual(["a", "b", "c"]);
  (await taken[0]!).release();
  (await taken[2]!).release();
  await settled();
  expect(granted).toEqual(["a", "b", "c", "d", "e"]);
  expect([slots.taken, slots.waiting]).toEqual([2, 0]);
  (await taken[3]!).release();
  (await taken[4]!).release();
  expect(slots.taken).toBe(0);
});

test("a release is idempotent: a slot released twice frees one place, not two", async () => {
  const slots = new CliStartSlots({ limit: 1, holdMs: 2_000, setTimeout: manualTimers().setTimeout });
  const granted: string[] = [];
  const first = await taker(slots, "a", granted);
  const waiting = [taker(slots, "b", granted), taker(slots, "c", granted)];
  first.release();
  first.release();
  await settled();
  expect(granted).toEqual(["a", "b"]);
  expect([slots.taken, slots.waiting]).toEqual([1, 1]);
  (await waiting[0]!).release();
  (await waiting[1]!).release();
  expect(slots.taken).toBe(0);
});

test("a slot held `holdMs` is freed whether or not its CLI spoke; its own release then does nothing", async () => {
  const timers = manualTimers();
  const slots = new CliStartSlots({ limit: 1, holdMs: 1_500, setTimeout: timers.setTimeout });
  const granted: string[] = [];
  const stuck = await taker(slots, "stuck", granted);
  const next = taker(slots, "next", granted);
  await settled();
  expect(granted).toEqual(["stuck"]);
  expect(timers.pending.map((timer) => timer.ms)).toEqual([1_500]);

  timers.fireAll();
  await settled();
  expect(granted).toEqual(["stuck", "next"]);
  stuck.release();
  const after = taker(slots, "after", granted);
  await settled();
  expect(granted).toEqual(["stuck", "next"]);
  (await next).release();
  (await after).release();
  expect(slots.taken).toBe(0);
});

test("an aborted wait leaves the queue with the signal's reason; the others keep their places", async () => {
  const slots = new CliStartSlots({ limit: 1, holdMs: 2_000, setTimeout: manualTimers().setTimeout });
  const granted: string[] = [];
  const holder = await taker(slots, "holder", granted);
  const cancelled = new AbortController();
  const gone = taker(slots, "cancelled", granted, cancelled.signal);
  const kept = taker(slots, "kept", granted);
  cancelled.abort(new Error("turn cancelled"));
  await expect(gone).rejects.toThrow("turn cancelled");
  expect(slots.waiting).toBe(1);

  holder.release();
  const slot: StartSlot = await kept;
  expect(granted).toEqual(["holder", "kept"]);
  slot.release();
  await expect(slots.take(AbortSignal.abort(new Error("already")))).rejects.toThrow("already");
  expect(slots.taken).toBe(0);
});

test("a limit or hold that is not a positive number is refused, naming it", () => {
  expect(() => new CliStartSlots({ limit: 0, holdMs: 1 })).toThrow("limit: an integer >= 1, got 0");
  expect(() => new CliStartSlots({ limit: 1.5, holdMs: 1 })).toThrow("limit: an integer >= 1, got 1.5");
  expect(() => new CliStartSlots({ limit: 1, holdMs: 0 })).toThrow("holdMs: a number > 0, got 0");
});
