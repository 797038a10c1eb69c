import type { ApprovalRequest } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { refusal, sleep } from "./helpers.js";
import type { ContractScope } from "./scope.js";

/** Approvals: permission requests put to the board, decided exactly once by a decider its policy names. */
export function describeApprovalContract(scope: ContractScope): void {
  const { open, spawn, settlesAtOnce, draft, never } = scope;

  const ask = (from: string, overrides: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
    to: "human:iain",
    from: from as ApprovalRequest["from"],
    body: "Bash(rm -rf build)",
    deciders: ["human:iain"],
    ...overrides,
  });

  describe("approvals", () => {
    test("an approval is an open action of kind approval with its deciders, never claimed", async () => {
      const board = await open({ now: () => Date.parse("2026-11-06T14:00:00.000Z") });
      const worker = await board.register("worker");
      const lead = await board.register("lead");
      const request = await board.requestApproval(
        ask(worker.identity, { to: "lead", deciders: ["lead", "human"] }),
      );
      expect(request).toEqual({
        id: expect.stringMatching(/^act_[0-9a-f]{16}$/),
        seq: expect.any(Number),
        kind: "approval",
        to: "lead",
        from: worker.identity,
        body: "Bash(rm -rf build)",
        deciders: ["lead", "human"],
        state: "open",
        createdAt: "2026-11-06T14:00:00.000Z",
      });
      // The lead it is addressed to sees it among what it waits for; it decides it rather than claims it.
      const page = await board.waitForClaimable(lead.identity, undefined, { timeoutMs: never });
      expect(page.records).toEqual([request]);
      const claimed = await refusal(board.claim(lead.identity, request.id));
      expect(claimed.code).toBe("not_permitted");
      expect(claimed.message).toContain("decided");
      expect(await board.claimNext(lead.identity)).toEqual({ outcome: "none" });
      expect((await refusal(board.post(draft({ kind: "approval" })))).argument).toBe("kind");
      expect((await refusal(board.requestApproval(ask(worker.identity, { to: "*" })))).argument).toBe("to");
      expect((await refusal(board.requestApproval(ask(worker.identity, { deciders: [] })))).argument).toBe(
        "deciders",
      );
      expect(
        (await refusal(board.requestApproval(ask(worker.identity, { deciders: ["agent:x#00000000"] }))))
          .argument,
      ).toBe("deciders.0");
    });

    test("an approval to a person reaches no agent, not even one waiting for everything", async () => {
      const board = await open();
      const worker = await board.register("worker");
      const anyone = await board.register("human");
      await board.requestApproval(ask(worker.identity));
      const page = await board.waitForClaimable(anyone.identity, undefined, { timeoutMs: 200 });
      expect(page.records).toEqual([]);
    });

    test("a decider decides once: the decision, who made it and why; a second decision answers already_decided", async () => {
      const board = await open({ now: () => Date.parse("2026-11-06T14:05:00.000Z") });
      const worker = await board.register("worker");
      const request = await board.requestApproval(
        ask(worker.identity, { deciders: ["human:iain", "human:ana"] }),
      );

      const decided = await board.decide("human:iain", request.id, "allow", "build is generated");
      expect(decided).toEqual({
        outcome: "decided",
        record: {
          ...request,
          seq: expect.any(Number),
          state: "decided",
          decision: "allow",
          decidedBy: "human:iain",
          result: "build is generated",
          closedAt: "2026-11-06T14:05:00.000Z",
        },
      });
      expect(await board.decide("human:ana", request.id, "deny")).toEqual({
        outcome: "already_decided",
        record: decided.record,
      });
      expect(await board.decide("human:iain", request.id, "allow")).toEqual({
        outcome: "already_decided",
        record: decided.record,
      });
      expect(await board.get(request.id)).toEqual(decided.record);
    });

    test("only a decider the policy names may decide: any person for human, an agent by its name while active", async () => {
      const board = await open();
      const worker = await board.register("worker");
      const lead = await board.register("lead");
      const stranger = await board.register("stranger");
      const impostor = await board.register("human");
      const forIain = await board.requestApproval(ask(worker.identity));
      const forLead = await board.requestApproval(ask(worker.identity, { to: "lead", deciders: ["lead"] }));
      const forPeople = await board.requestApproval(ask(worker.identity, { deciders: ["human"] }));

      for (const [by, id] of [
        ["human:ana", forIain.id],
        ["human", forIain.id],
        [lead.identity, forIain.id],
        [stranger.identity, forLead.id],
        ["human:iain", forLead.id],
        [impostor.identity, forPeople.id],
        [lead.identity, forPeople.id],
      ] as const) {
        const refused = await refusal(board.decide(by, id, "allow"));
        expect([by, refused.code]).toEqual([by, "not_permitted"]);
      }
      expect(await board.get(forLead.id)).toMatchObject({ state: "open" });
      expect(await board.decide(lead.identity, forLead.id, "deny", "not now")).toMatchObject({
        outcome: "decided",
        record: { decision: "deny", decidedBy: lead.identity, result: "not now" },
      });
      expect(await board.decide("human:ana", forPeople.id, "allow")).toMatchObject({ outcome: "decided" });

      const departing = await board.requestApproval(ask(worker.identity, { to: "lead", deciders: ["lead"] }));
      await board.depart(lead.identity);
      expect((await refusal(board.decide(lead.identity, departing.id, "allow"))).code).toBe(
        "agent_not_active",
      );
    });

    test("decide refuses bad arguments by name, an action that is no approval and an unknown one", async () => {
      const board = await open();
      const worker = await board.register("worker");
      const request = await board.requestApproval(ask(worker.identity));
      const plain = await board.post(draft());
      expect((await refusal(board.decide("human:iain", request.id, "maybe" as never))).argument).toBe(
        "decision",
      );
      expect((await refusal(board.decide("iain", request.id, "allow"))).argument).toBe("by");
      expect((await refusal(board.decide("human:iain", request.id, "allow", 3 as never))).argument).toBe(
        "reason",
      );
      expect((await refusal(board.decide("human:iain", plain.id, "allow"))).code).toBe("invalid_transition");
      expect((await refusal(board.decide("human:iain", "act_0000000000000000" as never, "allow"))).code).toBe(
        "action_not_found",
      );
    });

    test("the requester's end withdraws its open approvals: departed, or its lease lapsed", async () => {
      const board = await open();
      await board.configure({ leaseTtlMs: 1000 });
      const departing = await board.register("worker");
      const lapsing = await board.register("worker");
      const first = await board.requestApproval(ask(departing.identity));
      const second = await board.requestApproval(ask(lapsing.identity));
      await board.depart(departing.identity);
      expect(await board.get(first.id)).toMatchObject({
        state: "cancelled",
        cancelledBy: departing.identity,
        result: expect.stringContaining("withdrawn"),
      });
      await sleep(1600);
      expect(await board.expireLeases()).toEqual({ expired: [lapsing.identity], released: [] });
      expect(await board.get(second.id)).toMatchObject({ state: "cancelled", cancelledBy: lapsing.identity });
      expect((await refusal(board.decide("human:iain", second.id, "allow"))).code).toBe("invalid_transition");
    });

    test("a decision in another process wakes a wait on the approval here", async () => {
      const board = await open();
      const worker = await board.register("worker");
      const request = await board.requestApproval(ask(worker.identity));
      const decider = await spawn();
      const waiting = board.waitForAction(request.id, "completed", { timeoutMs: never });
      expect(await settlesAtOnce(waiting)).toBe("pending");
      // Time for a store's listener to connect: a wait it finds on connecting would prove nothing.
      await sleep(1000);

      await decider.call("decide", "human:iain", request.id, "deny", "too broad");
      expect(await waiting).toEqual({
        reached: true,
        record: expect.objectContaining({ state: "decided", decision: "deny", decidedBy: "human:iain" }),
      });
    });
  });
}
