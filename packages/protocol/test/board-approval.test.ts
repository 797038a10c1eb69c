import { describe, expect, test } from "vitest";
import { type ZodType, z } from "zod";
import { ActionRecord, AgentRecord, DeciderName } from "../src/board.js";
import {
  ActionWaitResult,
  ApprovalRequest,
  BoardChanges,
  BoardSettings,
  DecideOutcome,
} from "../src/board-approval.js";

function refusal(schema: ZodType, value: unknown): string {
  const result = schema.safeParse(value);
  if (result.success) throw new Error(`expected a refusal, got ${JSON.stringify(result.data)}`);
  return z.prettifyError(result.error);
}

const worker = "agent:worker#0a1b2c3d";
const at = "2026-11-06T10:15:00.000Z";
const request = {
  id: "act_00112233aabbccdd",
  seq: 3,
  kind: "approval",
  to: "human:iain",
  from: worker,
  body: "Bash(rm -rf build)",
  deciders: ["human:iain", "lead"],
  state: "open",
  createdAt: at,
};
const decided = {
  ...request,
  seq: 4,
  state: "decided",
  decision: "allow",
  decidedBy: "human:iain",
  closedAt: at,
};

describe("approvals", () => {
  test("an approval request names its deciders: people and agents by name", () => {
    const asked = { to: "lead", from: worker, body: "x", deciders: ["human", "human:iain", "lead"] };
    expect(ApprovalRequest.parse(asked)).toEqual(asked);
    expect(refusal(ApprovalRequest, { ...asked, deciders: [] })).toContain("→ at deciders");
    expect(refusal(ApprovalRequest, { ...asked, deciders: ["agent:lead#00000000"] })).toContain(
      "→ at deciders[0]",
    );
    expect(refusal(ApprovalRequest, { ...asked, deciders: Array(17).fill("lead") })).toContain("at most 16");
    expect(DeciderName.safeParse("human:").success).toBe(false);
  });

  test("a decided approval says the decision and who made it; one without them is refused", () => {
    expect(ActionRecord.parse(request)).toEqual(request);
    expect(ActionRecord.parse(decided)).toEqual(decided);
    expect(refusal(ActionRecord, { ...decided, decision: "maybe" })).toContain("→ at decision");
    expect(refusal(ActionRecord, { ...decided, decidedBy: undefined })).toContain("→ at decidedBy");
    expect(DecideOutcome.parse({ outcome: "already_decided", record: decided }).outcome).toBe(
      "already_decided",
    );
    expect(refusal(DecideOutcome, { outcome: "decided", record: request })).toContain("→ at record.state");
  });
});

describe("claims, leases and waits", () => {
  test("a claimed record carries its fencing token, a positive integer", () => {
    const claimed = {
      ...request,
      kind: "job",
      deciders: undefined,
      state: "claimed",
      claimedBy: worker,
      claimedAt: at,
    };
    expect(refusal(ActionRecord, claimed)).toContain("→ at fence");
    expect(refusal(ActionRecord, { ...claimed, fence: 0 })).toContain("→ at fence");
    expect(ActionRecord.parse({ ...claimed, fence: 2 })).toMatchObject({ fence: 2 });
  });

  test("an active identity may hold a lease and name its process; an expired one has ended", () => {
    const active = {
      identity: worker,
      name: "worker",
      status: "active",
      registeredAt: at,
      leaseExpiresAt: at,
      process: { host: "build-1", pid: 42 },
    };
    expect(AgentRecord.parse(active)).toEqual(active);
    const { leaseExpiresAt: _, ...unleased } = active;
    expect(AgentRecord.parse({ ...unleased, status: "expired", endedAt: at }).status).toBe("expired");
    expect(refusal(AgentRecord, { ...active, status: "expired", endedAt: at })).toContain("leaseExpiresAt");
    expect(refusal(AgentRecord, { ...active, process: { host: "", pid: 42 } })).toContain(
      "→ at process.host",
    );
  });

  test("settings, a wait's result and a live view's step", () => {
    expect(BoardSettings.parse({ leaseTtlMs: 15_000 })).toEqual({ leaseTtlMs: 15_000 });
    expect(refusal(BoardSettings, { leaseTtlMs: 50 })).toContain("→ at leaseTtlMs");
    expect(ActionWaitResult.parse({ reached: false, record: request }).reached).toBe(false);
    const cursor = Buffer.from('{"v":1}').toString("base64url");
    expect(BoardChanges.parse({ records: [decided], cursor, agentsVersion: 3 }).agentsVersion).toBe(3);
  });
});
