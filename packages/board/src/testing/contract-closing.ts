import { describe, expect, test } from "vitest";
import { refusal } from "./helpers.js";
import type { ContractScope } from "./scope.js";

/** Complete and cancel. */
export function describeCloseOutContract(scope: ContractScope): void {
  const { open, draft } = scope;

  describe("complete and cancel", () => {
    test("only the claimer completes; completing again answers the first completion", async () => {
      const board = await open({ now: () => Date.parse("2026-11-06T12:00:00.000Z") });
      const bob = await board.register("bob");
      const carol = await board.register("carol");
      const action = await board.post(draft());

      const early = await refusal(board.complete(bob.identity, action.id, "done"));
      expect(early.code).toBe("invalid_transition");
      expect(early.message).toContain("claim it before completing");

      const { record: claimed } = await board.claim(bob.identity, action.id);
      expect((await refusal(board.complete(carol.identity, action.id, "mine"))).code).toBe("not_claimer");

      const completed = await board.complete(bob.identity, action.id, "LGTM");
      expect(completed).toEqual({
        outcome: "completed",
        record: {
          ...claimed,
          seq: expect.any(Number),
          state: "done",
          result: "LGTM",
          closedAt: "2026-11-06T12:00:00.000Z",
        },
      });
      expect(await board.complete(bob.identity, action.id, "again")).toEqual(completed);
      expect((await refusal(board.complete(carol.identity, action.id))).code).toBe("not_claimer");
      expect((await refusal(board.cancel("human", action.id))).code).toBe("invalid_transition");
    });

    test("complete refuses bad arguments by name", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const action = await board.post(draft());
      await board.claim(bob.identity, action.id);
      expect((await refusal(board.complete(bob.identity, action.id, 12 as never))).argument).toBe("result");
      expect((await refusal(board.complete(bob.identity, "x" as never))).argument).toBe("id");
      expect((await refusal(board.complete("bob" as never, action.id))).argument).toBe("agent");
      expect((await refusal(board.complete(bob.identity, "act_0000000000000000" as never))).code).toBe(
        "action_not_found",
      );
    });

    test("the poster or a human cancels; a claimer then learns its work was cancelled", async () => {
      const board = await open({ now: () => Date.parse("2026-11-06T13:00:00.000Z") });
      const alice = await board.register("alice");
      const bob = await board.register("bob");
      const open1 = await board.post(draft({ from: alice.identity }));
      const held = await board.post(draft({ from: alice.identity }));
      await board.claim(bob.identity, held.id);

      const byPoster = await board.cancel(alice.identity, open1.id, "not needed");
      expect(byPoster).toMatchObject({
        state: "cancelled",
        cancelledBy: alice.identity,
        result: "not needed",
        closedAt: "2026-11-06T13:00:00.000Z",
      });
      const byHuman = await board.cancel("human:iain", held.id);
      expect(byHuman).toMatchObject({
        state: "cancelled",
        cancelledBy: "human:iain",
        claimedBy: bob.identity,
      });
      expect(await board.complete(bob.identity, held.id, "finished anyway")).toEqual({
        outcome: "cancelled",
        record: byHuman,
      });
      expect((await refusal(board.cancel("human", held.id))).code).toBe("invalid_transition");
    });

    test("another agent may not cancel, but the poster's successor may", async () => {
      const board = await open();
      const alice = await board.register("alice");
      const bob = await board.register("bob");
      const action = await board.post(draft({ from: alice.identity }));

      expect((await refusal(board.cancel(bob.identity, action.id))).code).toBe("not_permitted");
      const agentCalledHuman = await board.register("human");
      const fromAHuman = await board.post(draft({ from: "human" }));
      expect((await refusal(board.cancel(agentCalledHuman.identity, fromAHuman.id))).code).toBe(
        "not_permitted",
      );
      const { current } = await board.retire(alice.identity);
      expect((await refusal(board.cancel(alice.identity, action.id))).code).toBe("agent_not_active");
      expect(await board.cancel(current.identity, action.id)).toMatchObject({ state: "cancelled" });
      expect((await refusal(board.cancel("alice", action.id))).argument).toBe("by");
      expect((await refusal(board.cancel("human", action.id, 3 as never))).argument).toBe("reason");
    });
  });
}
