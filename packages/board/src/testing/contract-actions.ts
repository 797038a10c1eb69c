import type { ActionRecord, Cursor } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { refusal } from "./helpers.js";
import type { ContractScope } from "./scope.js";

/** Post, get and list; cursors. */
export function describeActionContract(scope: ContractScope): void {
  const { open, newHarness, draft } = scope;

  describe("post, get and list", () => {
    test("post records an open action with a fresh id, the next position and the clock's time", async () => {
      const board = await open({ now: () => Date.parse("2026-11-06T10:15:00.000Z") });
      const alice = await board.register("alice");
      const first = await board.post(draft({ to: "bob", from: alice.identity, body: "review PR 12" }));
      const second = await board.post(draft());

      expect(first).toEqual({
        id: expect.stringMatching(/^act_[0-9a-f]{16}$/),
        seq: expect.any(Number),
        kind: "review",
        to: "bob",
        from: alice.identity,
        body: "review PR 12",
        state: "open",
        createdAt: "2026-11-06T10:15:00.000Z",
      });
      expect(second.seq).toBeGreaterThan(first.seq);
      expect(second.id).not.toBe(first.id);
      expect(await board.get(first.id)).toEqual(first);
    });

    test("ids and identities come from the injected randomness, minting again on a clash", async () => {
      // The second post draws the first post's id again, clashes, and mints once more.
      const bytes = [0x11, 0x11, 0x11, 0x22];
      const board = await open({ randomBytes: (size) => new Uint8Array(size).fill(bytes.shift() ?? 0x33) });
      const agent = await board.register("alice");
      const first = await board.post(draft());
      const second = await board.post(draft());

      expect(agent.identity).toBe("agent:alice#11111111");
      expect(first.id).toBe("act_1111111111111111");
      expect(second.id).toBe("act_2222222222222222");
    });

    test("post refuses a bad draft naming the field, and a sender that is not active", async () => {
      const board = await open();
      expect((await refusal(board.post(draft({ to: "" })))).argument).toBe("to");
      expect((await refusal(board.post(draft({ from: "alice" })))).argument).toBe("from");
      expect((await refusal(board.post(draft({ kind: "has space" })))).argument).toBe("kind");
      expect((await refusal(board.post({ ...draft(), body: 7 } as never))).argument).toBe("body");
      expect((await refusal(board.post(null as never))).argument).toBe("draft");

      const stranger = await refusal(board.post(draft({ from: "agent:alice#00000000" })));
      expect([stranger.code, stranger.argument]).toEqual(["agent_not_found", "from"]);
      const alice = await board.register("alice");
      await board.depart(alice.identity);
      const departed = await refusal(board.post(draft({ from: alice.identity })));
      expect([departed.code, departed.argument]).toEqual(["agent_not_active", "from"]);
      expect((await board.list()).records).toEqual([]);
    });

    test("get refuses an unknown id and a malformed one", async () => {
      const board = await open();
      expect((await refusal(board.get("act_0000000000000000" as never))).code).toBe("action_not_found");
      expect((await refusal(board.get("7" as never))).argument).toBe("id");
    });

    test("list pages through every record once, in order, resuming from each page's cursor", async () => {
      const board = await open();
      const posted: ActionRecord[] = [];
      for (let index = 0; index < 5; index++) posted.push(await board.post(draft({ body: `#${index}` })));

      const pages: ActionRecord[][] = [];
      let cursor: Cursor | undefined;
      for (;;) {
        const page = await board.list({ cursor, limit: 2 });
        if (page.records.length === 0) {
          expect(page.cursor).toBe(cursor);
          break;
        }
        pages.push(page.records);
        cursor = page.cursor;
      }
      expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
      expect(pages.flat()).toEqual(posted);
    });

    test("a change moves a record after every earlier cursor, so a reader sees it again", async () => {
      const board = await open();
      const bob = await board.register("bob");
      const action = await board.post(draft());
      const { cursor } = await board.list();
      await board.claim(bob.identity, action.id);

      const page = await board.list({ cursor });
      expect(page.records).toEqual([
        expect.objectContaining({ id: action.id, state: "claimed", claimedBy: bob.identity }),
      ]);
      expect(page.records[0]!.seq).toBeGreaterThan(action.seq);
    });

    test("a record posted through another connection is listed", async () => {
      const writer = await open();
      const reader = await open();
      const action = await writer.post(draft());
      expect((await reader.list()).records).toEqual([action]);
    });
  });

  describe("cursors", () => {
    test("a cursor the board did not mint is refused naming cursor", async () => {
      const board = await open();
      await board.post(draft());
      const notJson = Buffer.from("nope").toString("base64url");
      const notACursor = Buffer.from(JSON.stringify({ hello: 1 })).toString("base64url");
      const alice = await board.register("alice");
      for (const cursor of ["", "has space", notJson, notACursor, 42, { seq: 1 }]) {
        const error = await refusal(board.list({ cursor: cursor as never }));
        expect([error.code, error.argument]).toEqual(["invalid_argument", "cursor"]);
        expect(error.message).toMatch(/^cursor: /);
        const waitError = await refusal(
          board.waitForClaimable(alice.identity, cursor as never, { timeoutMs: 0 }),
        );
        expect(waitError.argument).toBe("cursor");
      }
    });

    test("a cursor from another board is refused naming cursor", async () => {
      const board = await open();
      const elsewhere = await open({}, await newHarness());
      await elsewhere.post(draft());
      const { cursor } = await elsewhere.list();
      const error = await refusal(board.list({ cursor }));
      expect(error.argument).toBe("cursor");
      expect(error.message).toContain("another board");
    });

    test("list refuses a bad limit naming limit", async () => {
      const board = await open();
      for (const limit of [0, 501, 1.5, "10"]) {
        expect((await refusal(board.list({ limit: limit as never }))).argument).toBe("limit");
      }
    });
  });
}
