import { describe, expect, test } from "vitest";
import { refusal, withoutLease } from "./helpers.js";
import type { ContractScope } from "./scope.js";

/** Identities (depart, retire, agents) and closing the board. */
export function describeAgentContract(scope: ContractScope): void {
  const { open, settlesAtOnce, draft, never } = scope;

  describe("agents", () => {
    test("depart releases the identity's claims to open, and a waiter sees them again", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const bobNext = await board.register("bob");
      const first = await board.post(draft({ to: "bob" }));
      const second = await board.post(draft({ to: "*" }));
      const kept = await board.post(draft({ to: "*" }));
      await board.claim(bob.identity, first.id);
      await board.claim(bob.identity, second.id);
      await board.claim(bobNext.identity, kept.id);
      const { cursor } = await board.list();
      const waiting = board.waitForClaimable(bobNext.identity, cursor, { timeoutMs: never });
      expect(await settlesAtOnce(waiting)).toBe("pending");

      const departure = await board.depart(bob.identity);
      expect(departure).toEqual({
        agent: { ...withoutLease(bob), status: "departed", endedAt: expect.any(String) },
        released: [first.id, second.id],
      });
      const woken = await waiting;
      expect(woken.records.map((record) => [record.id, record.state])).toEqual([
        [first.id, "open"],
        [second.id, "open"],
      ]);
      expect(await board.get(kept.id)).toMatchObject({ state: "claimed", claimedBy: bobNext.identity });
      expect(await board.depart(bob.identity)).toEqual({ agent: departure.agent, released: [] });
      expect((await refusal(board.depart("agent:nobody#00000000" as never))).code).toBe("agent_not_found");
    });

    test("retire registers the successor first, then retires the old identity and releases its claims", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const action = await board.post(draft({ to: "bob" }));
      await board.claim(bob.identity, action.id);

      const retirement = await board.retire(bob.identity);
      expect(retirement.current).toMatchObject({ name: "bob", status: "active" });
      expect(retirement.current.identity).not.toBe(bob.identity);
      expect(retirement.retired).toEqual({
        ...withoutLease(bob),
        status: "retired",
        endedAt: expect.any(String),
        successor: retirement.current.identity,
      });
      expect(Date.parse(retirement.current.registeredAt)).toBeLessThan(
        Date.parse(retirement.retired.endedAt),
      );
      expect(retirement.released).toEqual([action.id]);
      expect(await board.get(action.id)).toMatchObject({ state: "open" });
      expect((await board.claim(retirement.current.identity, action.id)).outcome).toBe("claimed");
      const again = await refusal(board.retire(bob.identity));
      expect([again.code, again.argument]).toEqual(["agent_not_active", "agent"]);
    });

    test("retire into a given successor refuses one of another name", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const carol = await board.register("carol");
      const error = await refusal(board.retire(bob.identity, { successor: carol.identity }));
      expect(error.argument).toBe("successor");
      expect((await board.agents()).map((agent) => agent.status)).toEqual(["active", "active"]);
    });

    test("agents lists every identity with its status, in registration order", async () => {
      const board = await open();
      const alice = await board.register("alice");
      const bob = await board.register("bob");
      const carol = await board.register("carol");
      const { current } = await board.retire(bob.identity);
      await board.depart(carol.identity);

      const statuses = (await board.agents()).map((agent) => [agent.identity, agent.status]);
      expect(statuses).toEqual([
        [alice.identity, "active"],
        [bob.identity, "retired"],
        [carol.identity, "departed"],
        [current.identity, "active"],
      ]);
      expect((await refusal(board.register("no spaces"))).argument).toBe("name");
    });
  });

  describe("close", () => {
    test("rejects pending waits and refuses later calls as closed", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const waiting = board.waitForClaimable(bob.identity, undefined, { timeoutMs: never });
      expect(await settlesAtOnce(waiting)).toBe("pending");

      await board.close();
      expect((await refusal(waiting)).code).toBe("closed");
      expect((await refusal(board.list())).code).toBe("closed");
      expect((await refusal(board.post(draft()))).code).toBe("closed");
      await board.close();
    });
  });
}
