import { describe, expect, test } from "vitest";
import { refusal, sleep } from "./helpers.js";
import type { ContractScope } from "./scope.js";

/** Waits on one action (`bee wait`) and on any change (`bee watch`). */
export function describeActionWaitContract(scope: ContractScope): void {
  const { open, spawn, settlesAtOnce, draft, never } = scope;

  describe("waitForAction", () => {
    test("answers at once when the action is already where the wait is going", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const action = await board.post(draft());
      const { record: claimed } = await board.claim(bob.identity, action.id);
      expect(await board.waitForAction(action.id, "claimed", { timeoutMs: never })).toEqual({
        reached: true,
        record: claimed,
      });
      const { record: done } = await board.complete(bob.identity, action.id, "ok");
      for (const until of ["claimed", "completed"] as const) {
        expect(await board.waitForAction(action.id, until, { timeoutMs: never })).toEqual({
          reached: true,
          record: done,
        });
      }
    });

    test("wakes on a claim and on a complete made by another process", async () => {
      const board = await open();
      const action = await board.post(draft());
      const worker = await spawn();
      const claimedWait = board.waitForAction(action.id, "claimed", { timeoutMs: never });
      const completedWait = board.waitForAction(action.id, "completed", { timeoutMs: never });
      expect(await settlesAtOnce(claimedWait)).toBe("pending");
      // Time for a store's listener to connect: a wait it finds on connecting would prove nothing.
      await sleep(1000);

      const bob = await worker.call("register", "bob");
      await worker.call("claim", bob.identity, action.id);
      expect(await claimedWait).toMatchObject({
        reached: true,
        record: { state: "claimed", claimedBy: bob.identity },
      });
      expect(await settlesAtOnce(completedWait)).toBe("pending");
      await worker.call("complete", bob.identity, action.id, "shipped");
      expect(await completedWait).toMatchObject({
        reached: true,
        record: { state: "done", result: "shipped" },
      });
    });

    test("on timeout says the state as it is; a cancel ends the wait unreached", async () => {
      const board = await open();
      const action = await board.post(draft());
      expect(await board.waitForAction(action.id, "claimed", { timeoutMs: 300 })).toEqual({
        reached: false,
        record: action,
      });
      const waiting = board.waitForAction(action.id, "completed", { timeoutMs: never });
      const cancelled = await board.cancel("human", action.id, "obsolete");
      expect(await waiting).toEqual({ reached: false, record: cancelled });
    });

    test("never reports a claim a dead holder kept: once its lease lapses the action reads open again", async () => {
      const board = await open();
      await board.configure({ leaseTtlMs: 1000 });
      const action = await board.post(draft());
      const holder = await board.register("holder");
      await board.claim(holder.identity, action.id);
      // Waiting for completion across the lapse: the wait sweeps it, and the action is open, claimable again.
      const result = await board.waitForAction(action.id, "completed", { timeoutMs: 2500 });
      expect(result).toEqual({
        reached: false,
        record: expect.objectContaining({ id: action.id, state: "open" }),
      });
      expect((await board.agents())[0]).toMatchObject({ identity: holder.identity, status: "expired" });
    });

    test("refuses bad arguments by name and an unknown action", async () => {
      const board = await open();
      const action = await board.post(draft());
      expect(
        (await refusal(board.waitForAction(action.id, "done" as never, { timeoutMs: 1 }))).argument,
      ).toBe("until");
      expect((await refusal(board.waitForAction("x" as never, "claimed", { timeoutMs: 1 }))).argument).toBe(
        "id",
      );
      expect((await refusal(board.waitForAction(action.id, "claimed", { timeoutMs: -1 }))).argument).toBe(
        "timeoutMs",
      );
      expect(
        (await refusal(board.waitForAction("act_0000000000000000" as never, "claimed", { timeoutMs: 1 })))
          .code,
      ).toBe("action_not_found");
    });
  });

  describe("waitForChanges", () => {
    test("returns what changed after the cursor, woken by any change from another process", async () => {
      const board = await open();
      const action = await board.post(draft());
      const { cursor } = await board.list();
      const other = await spawn();
      const waiting = board.waitForChanges(cursor, { timeoutMs: never });
      expect(await settlesAtOnce(waiting)).toBe("pending");
      await sleep(1000);

      const bob = await other.call("register", "bob");
      await other.call("claim", bob.identity, action.id);
      const changes = await waiting;
      expect(changes.records).toEqual([expect.objectContaining({ id: action.id, state: "claimed" })]);
      expect(await board.list({ cursor: changes.cursor })).toEqual({ records: [], cursor: changes.cursor });
    });

    test("with the agents version it last saw, wakes when an identity comes or goes", async () => {
      const board = await open();
      const { cursor } = await board.list();
      const first = await board.waitForChanges(cursor, { timeoutMs: 0 });
      const other = await spawn();
      const waiting = board.waitForChanges(first.cursor, {
        timeoutMs: never,
        agentsVersion: first.agentsVersion,
      });
      expect(await settlesAtOnce(waiting)).toBe("pending");
      await sleep(1000);

      const bob = await other.call("register", "bob");
      const joined = await waiting;
      expect(joined.records).toEqual([]);
      expect(joined.agentsVersion).not.toBe(first.agentsVersion);
      expect((await board.agents()).map((agent) => agent.identity)).toEqual([bob.identity]);

      const left = board.waitForChanges(joined.cursor, {
        timeoutMs: never,
        agentsVersion: joined.agentsVersion,
      });
      await other.call("depart", bob.identity);
      expect((await left).agentsVersion).not.toBe(joined.agentsVersion);
    });

    test("an abort stops it at once", async () => {
      const board = await open();
      const controller = new AbortController();
      const waiting = board.waitForChanges(undefined, { timeoutMs: never, signal: controller.signal });
      expect(await settlesAtOnce(waiting)).toBe("pending");
      const reason = new Error("q pressed");
      controller.abort(reason);
      expect(await settlesAtOnce(waiting)).toEqual({ reason });
    });
  });
}
