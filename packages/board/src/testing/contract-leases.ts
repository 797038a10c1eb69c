import type { ActiveAgent } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { refusal, sleep } from "./helpers.js";
import type { ContractScope } from "./scope.js";

/** The store's clock in epoch ms, as the lease's expiry says it: read back from the record. */
function leaseEnd(agent: ActiveAgent): number {
  if (agent.leaseExpiresAt === undefined) throw new Error(`${agent.identity} holds no lease`);
  return Date.parse(agent.leaseExpiresAt);
}

// Short enough to lapse within a test, long enough for a loaded machine to claim within it.
const shortTtlMs = 1000;
// Comfortably past a short lease: a lapse is decided by the store's clock, never by this sleep's precision.
const pastShortTtlMs = 1600;

/** Leases and fencing tokens: a claim held by a dead or departed holder becomes claimable again. */
export function describeLeaseContract(scope: ContractScope): void {
  const { open, spawn, settlesAtOnce, draft, never } = scope;

  describe("leases and fencing", () => {
    test("the lease TTL is a board setting: 15 s by default, shared, refused out of range by name", async () => {
      const board = await open();
      const other = await open();
      expect(await board.settings()).toEqual({ leaseTtlMs: 15_000 });
      expect(await board.configure({ leaseTtlMs: 60_000 })).toEqual({ leaseTtlMs: 60_000 });
      expect(await other.settings()).toEqual({ leaseTtlMs: 60_000 });
      expect(await board.configure({})).toEqual({ leaseTtlMs: 60_000 });
      for (const leaseTtlMs of [0, 99, 86_400_001, 1.5, "1000"]) {
        expect((await refusal(board.configure({ leaseTtlMs } as never))).argument).toBe("leaseTtlMs");
      }
    });

    test("register leases an identity for the TTL on the store's clock, whatever the caller's clock; renew extends it", async () => {
      // Callers whose clocks are years apart agree on leases: they are the store's.
      const past = await open({ now: () => Date.parse("2020-01-01T00:00:00.000Z") });
      const future = await open({ now: () => Date.parse("2040-01-01T00:00:00.000Z") });
      await past.configure({ leaseTtlMs: 60_000 });
      const before = Date.now();
      const bob = await past.register("bob", { process: { host: "build-1", pid: 4242 } });
      expect(bob).toMatchObject({ status: "active", process: { host: "build-1", pid: 4242 } });
      expect(leaseEnd(bob)).toBeGreaterThanOrEqual(before + 60_000 - 1000);
      expect(leaseEnd(bob)).toBeLessThanOrEqual(Date.now() + 60_000 + 1000);

      await sleep(20);
      const renewed = await future.renew(bob.identity);
      expect(leaseEnd(renewed)).toBeGreaterThan(leaseEnd(bob));
      const action = await future.post(draft());
      expect(await future.claim(bob.identity, action.id)).toMatchObject({ outcome: "claimed" });
      expect((await past.agents())[0]).toMatchObject({ identity: bob.identity, status: "active" });
    });

    test("an identity registered without a lease holds until it ends; renewing it changes nothing", async () => {
      const board = await open();
      await board.configure({ leaseTtlMs: shortTtlMs });
      const person = await board.register("iain", { lease: false });
      expect(person.leaseExpiresAt).toBeUndefined();
      const action = await board.post(draft());
      await board.claim(person.identity, action.id);
      await sleep(pastShortTtlMs);
      expect(await board.renew(person.identity)).toEqual(person);
      expect(await board.expireLeases()).toEqual({ expired: [], released: [] });
      expect(await board.complete(person.identity, action.id)).toMatchObject({ outcome: "completed" });
      expect((await refusal(board.register("iain", { lease: "yes" } as never))).argument).toBe("lease");
    });

    test("a claim takes the next fencing token; a complete under another token is refused stale_fence", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const carol = await board.register("carol");
      const action = await board.post(draft());
      const first = await board.claim(bob.identity, action.id);
      expect(first).toMatchObject({ outcome: "claimed", record: { fence: 1 } });
      await board.depart(bob.identity);
      const second = await board.claim(carol.identity, action.id);
      expect(second).toMatchObject({ outcome: "claimed", record: { fence: 2, claimedBy: carol.identity } });

      const wrongFence = await refusal(board.complete(carol.identity, action.id, "x", { fence: 1 }));
      expect(wrongFence.code).toBe("stale_fence");
      expect((await refusal(board.complete(carol.identity, action.id, "x", { fence: 0 }))).argument).toBe(
        "fence",
      );
      // The departed holder's late complete, with or without its token.
      expect((await refusal(board.complete(bob.identity, action.id, "late", { fence: 1 }))).code).toBe(
        "stale_fence",
      );
      expect((await refusal(board.complete(bob.identity, action.id, "late"))).code).toBe("stale_fence");
      const done = await board.complete(carol.identity, action.id, "ok", { fence: 2 });
      expect(done).toMatchObject({ outcome: "completed", record: { fence: 2, result: "ok" } });
    });

    test("a holder whose lease lapses loses its claim: claimable again under a new token, its late complete refused", async () => {
      const board = await open();
      await board.configure({ leaseTtlMs: shortTtlMs });
      const carol = await board.register("carol", { lease: false });
      const action = await board.post(draft());
      const bob = await board.register("bob");
      await board.claim(bob.identity, action.id);
      await sleep(pastShortTtlMs);

      // No sweep has run: the board's own compare-and-set refuses the zombie.
      const zombie = await refusal(board.complete(bob.identity, action.id, "late", { fence: 1 }));
      expect(zombie.code).toBe("stale_fence");
      expect(zombie.message).toContain("no longer holds a lease");

      // A claim sweeps first, so the lapsed claim is won again.
      const reclaimed = await board.claim(carol.identity, action.id);
      expect(reclaimed).toMatchObject({
        outcome: "claimed",
        record: { claimedBy: carol.identity, fence: 2 },
      });
      expect((await board.agents()).find((agent) => agent.identity === bob.identity)).toMatchObject({
        status: "expired",
        endedAt: expect.any(String),
      });
      expect((await refusal(board.complete(bob.identity, action.id, "late"))).code).toBe("stale_fence");
      expect((await refusal(board.renew(bob.identity))).code).toBe("agent_not_active");
      expect((await refusal(board.post(draft({ from: bob.identity })))).code).toBe("agent_not_active");
    });

    test("renewing within the TTL keeps the claim", async () => {
      const board = await open();
      await board.configure({ leaseTtlMs: 1500 });
      const bob = await board.register("bob");
      const carol = await board.register("carol", { lease: false });
      const action = await board.post(draft());
      await board.claim(bob.identity, action.id);
      for (let round = 0; round < 6; round++) {
        await sleep(400);
        await board.renew(bob.identity);
      }
      expect(await board.claimNext(carol.identity)).toEqual({ outcome: "none" });
      expect(await board.expireLeases()).toEqual({ expired: [], released: [] });
      expect(await board.complete(bob.identity, action.id, "kept", { fence: 1 })).toMatchObject({
        outcome: "completed",
      });
    });

    test("expireLeases ends every lapsed identity and releases its claims; a renew after the lapse is refused", async () => {
      const board = await open();
      await board.configure({ leaseTtlMs: shortTtlMs });
      const first = await board.post(draft());
      const second = await board.post(draft());
      const bob = await board.register("bob");
      const kept = await board.register("kept", { lease: false });
      await board.claim(bob.identity, first.id);
      await board.claim(bob.identity, second.id);
      await sleep(pastShortTtlMs);

      const refused = await refusal(board.renew(bob.identity));
      expect([refused.code, refused.argument]).toEqual(["agent_not_active", "agent"]);
      // The refused renew swept already; a sweep now finds nothing more.
      expect(await board.expireLeases()).toEqual({ expired: [], released: [] });
      expect(await board.get(first.id)).toMatchObject({ state: "open" });
      expect(await board.get(second.id)).toMatchObject({ state: "open" });
      expect((await board.agents()).map((agent) => [agent.identity, agent.status])).toEqual([
        [bob.identity, "expired"],
        [kept.identity, "active"],
      ]);
    });

    test("expireLeases reports what it ended, and a second board agrees", async () => {
      const board = await open();
      const other = await open();
      await board.configure({ leaseTtlMs: shortTtlMs });
      const action = await board.post(draft());
      const bob = await board.register("bob");
      await board.claim(bob.identity, action.id);
      await sleep(pastShortTtlMs);
      expect(await other.expireLeases()).toEqual({ expired: [bob.identity], released: [action.id] });
      expect(await board.expireLeases()).toEqual({ expired: [], released: [] });
    });

    test("a waiter is woken when a dead holder's lease lapses, by the board's own timer", async () => {
      const board = await open();
      await board.configure({ leaseTtlMs: 2000 });
      const carol = await board.register("carol", { lease: false });
      const holderProcess = await spawn();
      const action = await board.post(draft());
      const holder = await holderProcess.call("register", "holder");
      await holderProcess.call("claim", holder.identity, action.id);
      const { cursor } = await board.list();
      const waiting = board.waitForClaimable(carol.identity, cursor, { timeoutMs: never });
      expect(await settlesAtOnce(waiting)).toBe("pending");

      // The holder dies without departing: nothing writes, nothing notifies; only the lease's expiry wakes the wait.
      await holderProcess.kill();
      const page = await waiting;
      expect(page.records).toEqual([expect.objectContaining({ id: action.id, state: "open" })]);
      expect(await board.claim(carol.identity, action.id)).toMatchObject({ record: { fence: 2 } });
    });
  });
}
