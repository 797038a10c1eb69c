import { describe, expect, test } from "vitest";
import { type ZodType, z } from "zod";
import {
  ActionDraft,
  ActionId,
  ActionPage,
  ActionRecipient,
  ActionRecord,
  ActionSender,
  ActionState,
  AgentRecord,
  AgentStatus,
  BoardErrorPayload,
  ClaimNextOutcome,
  ClaimOutcome,
  CompleteOutcome,
  Cursor,
  Departure,
  Retirement,
} from "../src/board.js";

/** The refusal as a person reads it: zod's pretty form names the path (`→ at to`). */
function refusal(schema: ZodType, value: unknown): string {
  const result = schema.safeParse(value);
  if (result.success) throw new Error(`expected a refusal, got ${JSON.stringify(result.data)}`);
  return z.prettifyError(result.error);
}

const alice = "agent:alice#0a1b2c3d";
const bob = "agent:bob#deadbeef";
const at = "2026-11-06T10:15:00.000Z";
const later = "2026-11-06T10:16:30.250Z";

const open = {
  id: "act_00112233aabbccdd",
  seq: 7,
  kind: "review",
  to: "bob",
  from: alice,
  body: "Please review PR 12",
  state: "open",
  createdAt: at,
};
const claimed = { ...open, seq: 8, state: "claimed", claimedBy: bob, claimedAt: later, fence: 1 };
const done = { ...claimed, seq: 9, state: "done", result: "LGTM", closedAt: later };
const cancelled = { ...open, seq: 10, state: "cancelled", cancelledBy: "human:iain", closedAt: later };

describe("ActionId", () => {
  test("accepts a board-minted id", () => {
    expect(ActionId.parse("act_00112233aabbccdd")).toBe("act_00112233aabbccdd");
  });
  test.each(["", "act_123", "ACT_00112233aabbccdd", "act_00112233AABBCCDD", "00112233aabbccdd"])(
    "refuses %j",
    (value) => {
      expect(ActionId.safeParse(value).success).toBe(false);
    },
  );
});

describe("ActionState and AgentStatus", () => {
  test("list exactly the states of the design", () => {
    expect(ActionState.options).toEqual(["open", "claimed", "done", "cancelled", "decided"]);
    expect(AgentStatus.options).toEqual(["active", "retired", "departed", "expired"]);
  });
});

describe("ActionRecipient", () => {
  test.each(["*", "bob", "build-bot.2", "human:iain"])("accepts %j", (value) => {
    expect(ActionRecipient.parse(value)).toBe(value);
  });
  test.each(["", "**", "bob smith", "agent:bob#deadbeef", "human:", "human:a b"])("refuses %j", (value) => {
    expect(refusal(ActionRecipient, value)).toContain("must be an agent name, * or human:<name>");
  });
});

describe("ActionSender", () => {
  test.each([alice, "human", "human:iain"])("accepts %j", (value) => {
    expect(ActionSender.parse(value)).toBe(value);
  });
  test.each(["alice", "agent:alice", "agent:alice#XYZ", "human:", "humans", "human:a b"])(
    "refuses %j",
    (value) => {
      expect(refusal(ActionSender, value)).toContain("must be an agent identity");
    },
  );
});

describe("ActionDraft", () => {
  const draft = { kind: "review", to: "*", from: "human", body: "" };

  test("accepts a draft from an agent and from a human", () => {
    expect(ActionDraft.parse(draft)).toEqual(draft);
    expect(ActionDraft.parse({ ...draft, from: alice, to: "bob" })).toMatchObject({ from: alice });
  });

  test.each([
    ["kind", { ...draft, kind: "" }],
    ["kind", { ...draft, kind: "has space" }],
    ["to", { ...draft, to: "" }],
    ["from", { ...draft, from: "alice" }],
    ["body", { ...draft, body: 12 }],
    ["body", { ...draft, body: "x".repeat(32_769) }],
  ])("refuses a bad %s by name", (field, value) => {
    expect(refusal(ActionDraft, value)).toContain(`→ at ${field}`);
  });

  test("refuses fields it does not know", () => {
    expect(refusal(ActionDraft, { ...draft, state: "done" })).toContain("state");
  });
});

describe("ActionRecord", () => {
  test.each([
    ["open", open],
    ["claimed", claimed],
    ["done", done],
    ["done without a result", { ...done, result: undefined }],
    ["cancelled while open", cancelled],
    ["cancelled while claimed", { ...cancelled, claimedBy: bob, claimedAt: later, result: "obsolete" }],
  ])("accepts a record %s", (_, value) => {
    expect(ActionRecord.parse(value)).toMatchObject({ id: value.id, state: value.state });
  });

  test.each([
    ["claimedBy", { ...claimed, claimedBy: undefined }],
    ["claimedBy", { ...claimed, claimedBy: "bob" }],
    ["claimedAt", { ...claimed, claimedAt: "yesterday" }],
    ["closedAt", { ...done, closedAt: undefined }],
    ["cancelledBy", { ...cancelled, cancelledBy: undefined }],
    ["seq", { ...open, seq: 0 }],
    ["seq", { ...open, seq: 1.5 }],
    ["createdAt", { ...open, createdAt: "2026-11-06T10:15:00+02:00" }],
    ["id", { ...open, id: "7" }],
    ["state", { ...open, state: "archived" }],
  ])("refuses a bad %s by name", (field, value) => {
    expect(refusal(ActionRecord, value)).toContain(`→ at ${field}`);
  });

  test("refuses a claim on an open record", () => {
    expect(refusal(ActionRecord, { ...open, claimedBy: bob })).toContain("claimedBy");
  });
});

describe("Cursor", () => {
  test("accepts the base64url text a board mints", () => {
    const minted = Buffer.from(JSON.stringify({ v: 1, b: "x", s: 3 })).toString("base64url");
    expect(Cursor.parse(minted)).toBe(minted);
  });
  test.each(["", "has space", "a+b/c=", "x".repeat(513)])("refuses %j", (value) => {
    expect(Cursor.safeParse(value).success).toBe(false);
  });
});

describe("ActionPage", () => {
  const cursor = Buffer.from('{"v":1}').toString("base64url");
  test("accepts records with the cursor after them, and an empty page", () => {
    expect(ActionPage.parse({ records: [open, done], cursor }).records).toHaveLength(2);
    expect(ActionPage.parse({ records: [], cursor })).toEqual({ records: [], cursor });
  });
  test("refuses a page without a cursor, or with a bad record, by name", () => {
    expect(refusal(ActionPage, { records: [] })).toContain("→ at cursor");
    expect(refusal(ActionPage, { records: [{ ...open, to: "" }], cursor })).toContain("→ at records[0].to");
  });
});

describe("ClaimOutcome and CompleteOutcome", () => {
  test("accept a won claim, a lost race and both ends of a complete", () => {
    expect(ClaimOutcome.parse({ outcome: "claimed", record: claimed }).outcome).toBe("claimed");
    expect(ClaimOutcome.parse({ outcome: "taken", record: done }).outcome).toBe("taken");
    expect(CompleteOutcome.parse({ outcome: "completed", record: done }).outcome).toBe("completed");
    expect(CompleteOutcome.parse({ outcome: "cancelled", record: cancelled }).outcome).toBe("cancelled");
  });
  test("refuse a won claim on a record nobody holds, and an unknown outcome", () => {
    expect(refusal(ClaimOutcome, { outcome: "claimed", record: open })).toContain("→ at record.state");
    expect(refusal(CompleteOutcome, { outcome: "completed", record: claimed })).toContain(
      "→ at record.state",
    );
    expect(refusal(ClaimOutcome, { outcome: "maybe", record: open })).toContain("→ at outcome");
  });
});

describe("ClaimNextOutcome", () => {
  test("accepts a claimed record and none", () => {
    expect(ClaimNextOutcome.parse({ outcome: "claimed", record: claimed })).toEqual({
      outcome: "claimed",
      record: claimed,
    });
    expect(ClaimNextOutcome.parse({ outcome: "none" })).toEqual({ outcome: "none" });
  });
  test("refuses a lost race, a claimed outcome on an open record and a none carrying a record", () => {
    expect(refusal(ClaimNextOutcome, { outcome: "taken", record: done })).toContain("→ at outcome");
    expect(refusal(ClaimNextOutcome, { outcome: "claimed", record: open })).toContain("→ at record.state");
    expect(refusal(ClaimNextOutcome, { outcome: "none", record: claimed })).toContain("record");
  });
});

describe("AgentRecord, Retirement and Departure", () => {
  const active = { identity: alice, name: "alice", status: "active", registeredAt: at };
  const successor = { ...active, identity: "agent:alice#ffff0000" };
  const retired = { ...active, status: "retired", endedAt: later, successor: successor.identity };
  const departed = { ...active, status: "departed", endedAt: later };

  test("accepts each status", () => {
    for (const record of [active, retired, departed]) {
      expect(AgentRecord.parse(record).status).toBe(record.status);
    }
  });

  test.each([
    ["identity", { ...active, identity: "alice" }],
    ["name", { ...active, name: "" }],
    ["successor", { ...retired, successor: undefined }],
    ["endedAt", { ...departed, endedAt: undefined }],
    ["status", { ...active, status: "gone" }],
  ])("refuses a bad %s by name", (field, value) => {
    expect(refusal(AgentRecord, value)).toContain(`→ at ${field}`);
  });

  test("a retirement holds the retired identity, its active successor and the released claims", () => {
    const retirement = { retired, current: successor, released: [open.id] };
    expect(Retirement.parse(retirement)).toEqual(retirement);
    expect(refusal(Retirement, { ...retirement, current: departed })).toContain("→ at current.status");
    expect(refusal(Retirement, { ...retirement, released: ["7"] })).toContain("→ at released[0]");
  });

  test("a departure never holds an active agent", () => {
    expect(Departure.parse({ agent: departed, released: [] }).agent.status).toBe("departed");
    expect(refusal(Departure, { agent: active, released: [] })).toContain("→ at agent.status");
  });
});

describe("BoardErrorPayload", () => {
  test("accepts a refusal naming its argument, and refuses an unknown code", () => {
    const payload = { code: "invalid_argument", message: "cursor: not minted here", argument: "cursor" };
    expect(BoardErrorPayload.parse({ ...payload, retryable: false })).toMatchObject(payload);
    expect(refusal(BoardErrorPayload, { ...payload, code: "oops", retryable: false })).toContain("→ at code");
  });
  test("marks a busy write whose outcome is unknown, and only as true", () => {
    const busy = { code: "busy", message: "server away", retryable: true };
    expect(BoardErrorPayload.parse({ ...busy, unsure: true })).toEqual({ ...busy, unsure: true });
    expect(refusal(BoardErrorPayload, { ...busy, unsure: "yes" })).toContain("→ at unsure");
  });
});
