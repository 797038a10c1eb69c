import type { ActionId, OpenAction } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { claimedOutcome, refusal } from "./helpers.js";
import type { ContractScope } from "./scope.js";

/** Claims by id and claimNext, across connections and processes. */
export function describeClaimContract(scope: ContractScope): void {
  const { open, spawn, draft, sixteenProcesses } = scope;

  describe("claim", () => {
    test("of sixteen processes claiming one action, exactly one wins", sixteenProcesses, async () => {
      const board = await open();
      const action = await board.post(draft({ to: "*" }));
      const claimers = await Promise.all(Array.from({ length: 16 }, () => spawn()));
      const identities = await Promise.all(
        claimers.map(async (claimer) => (await claimer.call("register", "claimer")).identity),
      );

      const outcomes = await Promise.all(
        claimers.map((claimer, index) => claimer.call("claim", identities[index]!, action.id)),
      );

      const winners = outcomes.filter((outcome) => outcome.outcome === "claimed");
      expect(winners).toHaveLength(1);
      const winner = winners[0]!.record.claimedBy;
      for (const outcome of outcomes.filter((each) => each.outcome === "taken")) {
        expect(outcome.record).toMatchObject({ state: "claimed", claimedBy: winner });
      }
      expect(await board.get(action.id)).toMatchObject({ state: "claimed", claimedBy: winner });
    });

    test("claiming again by the holder answers claimed; by anyone else, taken", async () => {
      const board = await open({ now: () => Date.parse("2026-11-06T11:00:00.000Z") });
      const bob = await board.register("bob");
      const bobAgain = await board.register("bob");
      const action = await board.post(draft({ to: "bob" }));

      const won = await board.claim(bob.identity, action.id);
      expect(won).toEqual(claimedOutcome(action, bob.identity, "2026-11-06T11:00:00.000Z"));
      expect(await board.claim(bob.identity, action.id)).toEqual(won);
      expect(await board.claim(bobAgain.identity, action.id)).toEqual({
        outcome: "taken",
        record: won.record,
      });
    });

    test("a closed action is taken", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const action = await board.post(draft());
      const cancelled = await board.cancel("human", action.id);
      expect(await board.claim(bob.identity, action.id)).toEqual({ outcome: "taken", record: cancelled });
    });

    test("refuses an action addressed to someone else, an unknown action and an inactive identity", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const forCarol = await board.post(draft({ to: "carol" }));
      expect((await refusal(board.claim(bob.identity, forCarol.id))).code).toBe("not_addressed");
      expect((await refusal(board.claim(bob.identity, "act_0000000000000000" as never))).code).toBe(
        "action_not_found",
      );
      expect((await refusal(board.claim("bob" as never, forCarol.id))).argument).toBe("agent");
      expect((await refusal(board.claim(bob.identity, "nope" as never))).argument).toBe("id");

      const forAll = await board.post(draft());
      expect((await refusal(board.claim("agent:nobody#00000000" as never, forAll.id))).code).toBe(
        "agent_not_found",
      );
      await board.depart(bob.identity);
      expect((await refusal(board.claim(bob.identity, forAll.id))).code).toBe("agent_not_active");
      expect(await board.get(forAll.id)).toMatchObject({ state: "open" });
    });
  });

  describe("claimNext", () => {
    test("claims what the caller can claim, oldest position first, then answers none", async () => {
      const board = await open({ now: () => Date.parse("2026-11-06T11:30:00.000Z") });
      const bob = await board.register("bob");
      const helper = await board.register("helper");
      const forCarol = await board.post(draft({ to: "carol" }));
      const first = await board.post(draft({ to: "*", body: "first" }));
      const taken = await board.post(draft({ to: "*" }));
      await board.claim(helper.identity, taken.id);
      const withdrawn = await board.post(draft({ to: "bob" }));
      await board.cancel("human", withdrawn.id);
      const second = await board.post(draft({ to: "bob", body: "second" }));
      const third = await board.post(draft({ to: "*", body: "third" }));

      const claimed = (action: OpenAction) =>
        claimedOutcome(action, bob.identity, "2026-11-06T11:30:00.000Z");
      const outcomes = [];
      for (let index = 0; index < 3; index++) outcomes.push(await board.claimNext(bob.identity));
      expect(outcomes).toEqual([claimed(first), claimed(second), claimed(third)]);
      const { cursor } = await board.list();
      expect(await board.claimNext(bob.identity)).toEqual({ outcome: "none" });

      // None changed nothing; each claim moved its record past every earlier cursor.
      expect(await board.list({ cursor })).toEqual({ records: [], cursor });
      expect(await board.get(forCarol.id)).toEqual(forCarol);
      for (const outcome of outcomes) {
        if (outcome.outcome !== "claimed") throw new Error("expected a claim");
        expect(await board.get(outcome.record.id)).toEqual(outcome.record);
        expect(outcome.record.seq).toBeGreaterThan(third.seq);
      }
    });

    test("an action released by a departing claimer is claimed next again, behind older ones", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const carol = await board.register("carol");
      const early = await board.post(draft());
      const later = await board.post(draft());
      expect(await board.claimNext(bob.identity)).toMatchObject({ record: { id: early.id } });
      await board.depart(bob.identity);

      const next = [await board.claimNext(carol.identity), await board.claimNext(carol.identity)];
      expect(next.map((outcome) => outcome.outcome === "claimed" && outcome.record.id)).toEqual([
        later.id,
        early.id,
      ]);
      expect(await board.claimNext(carol.identity)).toEqual({ outcome: "none" });
    });

    test("refuses a bad or inactive identity by name and claims nothing", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const action = await board.post(draft());
      expect((await refusal(board.claimNext("bob" as never))).argument).toBe("agent");
      expect((await refusal(board.claimNext(undefined as never))).argument).toBe("agent");
      const stranger = await refusal(board.claimNext("agent:nobody#00000000" as never));
      expect([stranger.code, stranger.argument]).toEqual(["agent_not_found", "agent"]);
      await board.depart(bob.identity);
      const departed = await refusal(board.claimNext(bob.identity));
      expect([departed.code, departed.argument]).toEqual(["agent_not_active", "agent"]);
      expect(await board.get(action.id)).toEqual(action);
    });

    test("a burst of claimNext calls over four connections at once claims every action once", async () => {
      const boards = await Promise.all(Array.from({ length: 4 }, () => open()));
      const posted = new Set<string>();
      for (let index = 0; index < 96; index++) posted.add((await boards[0]!.post(draft())).id);
      const claimers = await Promise.all(boards.map((board) => board.register("burst")));

      // Every call in flight at once: on a server, writers really overlap.
      const outcomes = await Promise.all(
        Array.from({ length: 96 }, (_, index) => boards[index % 4]!.claimNext(claimers[index % 4]!.identity)),
      );
      const claimed = outcomes.map((outcome) => (outcome.outcome === "claimed" ? outcome.record.id : "none"));
      expect(claimed.sort()).toEqual([...posted].sort());
      expect(await boards[0]!.claimNext(claimers[0]!.identity)).toEqual({ outcome: "none" });
    });

    test(
      "sixteen processes claiming next until none claim every action once and leave the rest",
      sixteenProcesses,
      async () => {
        const board = await open();
        const forAll: string[] = [];
        const forNobody: OpenAction[] = [];
        for (let index = 0; index < 64; index++) {
          if (index % 4 === 3) forNobody.push(await board.post(draft({ to: "nobody" })));
          else forAll.push((await board.post(draft({ to: "*", body: `#${index}` }))).id);
        }
        const claimers = await Promise.all(Array.from({ length: 16 }, () => spawn()));
        const identities = await Promise.all(
          claimers.map(async (claimer) => (await claimer.call("register", "claimer")).identity),
        );

        const won = await Promise.all(
          claimers.map(async (claimer, index) => {
            const ids: string[] = [];
            for (;;) {
              const outcome = await claimer.call("claimNext", identities[index]!);
              if (outcome.outcome === "none") return ids;
              expect(outcome.record.claimedBy).toBe(identities[index]);
              ids.push(outcome.record.id);
            }
          }),
        );

        // A double claim would list an id twice; a lost action would be missing.
        expect(won.flat().sort()).toEqual([...forAll].sort());
        for (const [index, ids] of won.entries()) {
          for (const id of ids) {
            expect(await board.get(id as ActionId)).toMatchObject({
              state: "claimed",
              claimedBy: identities[index],
            });
          }
        }
        for (const action of forNobody) expect(await board.get(action.id)).toEqual(action);
      },
    );
  });
}
