import type { AgentIdentity } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { refusal } from "./helpers.js";
import type { ContractScope } from "./scope.js";

/** waitForClaimable: what it returns, what wakes it, aborts and refusals. */
export function describeWaitContract(scope: ContractScope): void {
  const { open, spawn, settlesAtOnce, draft, never } = scope;

  describe("waitForClaimable", () => {
    test("returns at once with the claimable records after the cursor, and only those", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const helper = await board.register("helper");
      const toBob = await board.post(draft({ to: "bob" }));
      await board.post(draft({ to: "carol" }));
      const toAll = await board.post(draft({ to: "*" }));
      const taken = await board.post(draft({ to: "*" }));
      await board.claim(helper.identity, taken.id);

      const page = await board.waitForClaimable(bob.identity, undefined, { timeoutMs: never });
      expect(page.records.map((record) => record.id)).toEqual([toBob.id, toAll.id]);
      expect(await board.list({ cursor: page.cursor })).toEqual({ records: [], cursor: page.cursor });
    });

    test("hands back at most limit records, and the rest from the returned cursor", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const posted = [];
      for (let index = 0; index < 3; index++) posted.push((await board.post(draft({ to: "bob" }))).id);

      const first = await board.waitForClaimable(bob.identity, undefined, { timeoutMs: never, limit: 2 });
      const second = await board.waitForClaimable(bob.identity, first.cursor, {
        timeoutMs: never,
        limit: 2,
      });
      expect([...first.records, ...second.records].map((record) => record.id)).toEqual(posted);
    });

    test("wakes on a post from the same board", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const { cursor } = await board.list();
      const waiting = board.waitForClaimable(bob.identity, cursor, { timeoutMs: never });
      expect(await settlesAtOnce(waiting)).toBe("pending");

      const action = await board.post(draft({ to: "bob" }));
      expect((await waiting).records).toEqual([action]);
    });

    test("wakes on a post through another connection in the same process", async () => {
      const board = await open();
      const other = await open();
      const bob = await board.register("bob");
      const waiting = board.waitForClaimable(bob.identity, undefined, { timeoutMs: never });
      expect(await settlesAtOnce(waiting)).toBe("pending");

      const action = await other.post(draft({ to: "bob" }));
      expect((await waiting).records).toEqual([action]);
    });

    test("wakes on a post from another process", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const poster = await spawn();
      const waiting = board.waitForClaimable(bob.identity, undefined, { timeoutMs: never });
      expect(await settlesAtOnce(waiting)).toBe("pending");

      const action = await poster.call("post", draft({ to: "bob", body: "from another process" }));
      expect((await waiting).records).toEqual([action]);
    });

    test("wakes when another process releases a claim by departing", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const other = await spawn();
      const holder = await other.call("register", "holder");
      const action = await other.call("post", draft({ to: "*" }));
      await other.call("claim", holder.identity, action.id);
      const { cursor } = await board.list();
      const waiting = board.waitForClaimable(bob.identity, cursor, { timeoutMs: never });
      expect(await settlesAtOnce(waiting)).toBe("pending");
      // Time for a store's listener to connect: a wait it finds on connecting would prove nothing.
      await new Promise((resolve) => setTimeout(resolve, 1000));

      await other.call("depart", holder.identity);
      expect((await waiting).records).toEqual([expect.objectContaining({ id: action.id, state: "open" })]);
    });

    test("on timeout returns no records and a cursor past what the caller cannot claim", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const { cursor: start } = await board.list();
      await board.post(draft({ to: "carol" }));

      // Long enough for the first scan on a loaded machine: a timeout before it ends keeps the cursor.
      const page = await board.waitForClaimable(bob.identity, start, { timeoutMs: 1000 });
      expect(page.records).toEqual([]);
      expect(page.cursor).not.toBe(start);

      const mine = await board.post(draft({ to: "bob" }));
      const next = await board.waitForClaimable(bob.identity, page.cursor, { timeoutMs: never });
      expect(next.records).toEqual([mine]);
    });

    test("with an aborted signal refuses at once with the signal's reason", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const reason = new Error("user cancelled");
      const waiting = board.waitForClaimable(bob.identity, undefined, {
        timeoutMs: never,
        signal: AbortSignal.abort(reason),
      });
      expect(await settlesAtOnce(waiting)).toEqual({ reason });
    });

    test("an abort stops the wait at once and consumes nothing", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const { cursor } = await board.list();
      const controller = new AbortController();
      const waiting = board.waitForClaimable(bob.identity, cursor, {
        timeoutMs: never,
        signal: controller.signal,
      });
      expect(await settlesAtOnce(waiting)).toBe("pending");

      const reason = new Error("user cancelled");
      const posting = board.post(draft({ to: "bob" }));
      controller.abort(reason);
      expect(await settlesAtOnce(waiting)).toEqual({ reason });

      const action = await posting;
      expect((await board.waitForClaimable(bob.identity, cursor, { timeoutMs: never })).records).toEqual([
        action,
      ]);
    });

    test("refuses bad arguments by name, and an identity that is not active", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const wait = (agent: unknown, options: unknown) =>
        refusal(board.waitForClaimable(agent as AgentIdentity, undefined, options as never));

      expect((await wait("bob", { timeoutMs: 10 })).argument).toBe("agent");
      expect((await wait(bob.identity, { timeoutMs: "30" })).argument).toBe("timeoutMs");
      expect((await wait(bob.identity, { timeoutMs: -1 })).argument).toBe("timeoutMs");
      expect((await wait(bob.identity, {})).argument).toBe("timeoutMs");
      expect((await wait(bob.identity, { timeoutMs: 10, limit: 0 })).argument).toBe("limit");
      expect((await wait(bob.identity, { timeoutMs: 10, signal: "stop" })).argument).toBe("signal");
      expect((await wait(bob.identity, null)).argument).toBe("options");

      await board.depart(bob.identity);
      const departed = await wait(bob.identity, { timeoutMs: 10 });
      expect([departed.code, departed.argument]).toEqual(["agent_not_active", "agent"]);
      expect((await wait("agent:nobody#00000000", { timeoutMs: 10 })).code).toBe("agent_not_found");
    });
  });
}
