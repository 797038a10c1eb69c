import type { ChildProcess } from "node:child_process";
import type {
  ActionDraft,
  ActionId,
  ActionRecord,
  AgentIdentity,
  Cursor,
  OpenAction,
} from "@bridgeworks/protocol";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import type { Board, BoardDeps } from "../board.js";
import { BoardError } from "../errors.js";
import { BoardProcess } from "./board-process.js";

/** One store (a file, a database) that a contract test opens boards and board processes on. */
export interface BoardContractHarness {
  /**
   * Opens another board on this harness's store; each call is a separate connection. The board's
   * safety re-check must be slower than a test's timeout, so the tests prove the prompt wake-ups.
   */
  openBoard(deps?: Partial<BoardDeps>): Promise<Board>;
  /** Starts a process serving a board on the same store with `serveBoardOverStdio`; stdin and stdout piped. */
  spawnBoardProcess(): ChildProcess;
  /** Removes the store. Every board and process the suite opened is closed or killed by then. */
  dispose(): Promise<void>;
}

/** The BoardError `promise` rejects with; fails the test if it resolves or rejects with anything else. */
export async function refusal(promise: Promise<unknown>): Promise<BoardError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(BoardError);
  return error as BoardError;
}

/** Ends a child by pid whatever state it is in, and waits until it is gone. */
export async function killByPid(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    process.kill(child.pid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
  await exited;
}

/** A draft addressed to everyone from a human; `overrides` change any field. */
export function draftAction(overrides: Partial<ActionDraft> = {}): ActionDraft {
  return { kind: "review", to: "*", from: "human", body: "look at this", ...overrides };
}

/** What a won claim of `action` answers: the record claimed by `claimedBy` at `claimedAt`, at a new position. */
export function claimedOutcome(action: OpenAction, claimedBy: string, claimedAt: string) {
  return {
    outcome: "claimed",
    record: { ...action, seq: expect.any(Number), state: "claimed", claimedBy, claimedAt },
  };
}

/** A clock that starts at a fixed instant and moves 1 ms per read, so order shows in timestamps. */
export function tickingClock(startIso = "2026-11-06T10:00:00.000Z"): { now: () => number } {
  let next = Date.parse(startIso);
  return { now: () => next++ };
}

// Shorter than a test's timeout, so a wake-up that never comes fails as an empty page.
const never = 10_000;

// Sixteen node processes take a while to start on a loaded machine; this only bounds a hang.
const sixteenProcesses = { timeout: 120_000 };

/**
 * The behaviour every `Board` implementation shares. Run it once per implementation:
 * `describeBoardContract("sqlite", async () => sqliteHarness())`.
 */
export function describeBoardContract(name: string, makeHarness: () => Promise<BoardContractHarness>): void {
  describe(`Board contract: ${name}`, () => {
    const harnesses: BoardContractHarness[] = [];
    const boards: Board[] = [];
    const children: ChildProcess[] = [];
    let harness: BoardContractHarness;

    const newHarness = async () => {
      const made = await makeHarness();
      harnesses.push(made);
      return made;
    };
    const open = async (deps: Partial<BoardDeps> = {}, on: BoardContractHarness = harness) => {
      const board = await on.openBoard({ ...tickingClock(), ...deps });
      boards.push(board);
      return board;
    };
    // Every child is tracked from the moment it exists, so one that never gets ready is killed too.
    const spawn = async () => {
      const child = harness.spawnBoardProcess();
      children.push(child);
      return BoardProcess.start(child);
    };

    beforeEach(async () => {
      harness = await newHarness();
    });

    afterEach(async () => {
      await Promise.all(children.splice(0).map(killByPid));
      await Promise.all(boards.splice(0).map((board) => board.close()));
      await Promise.all(harnesses.splice(0).map((made) => made.dispose()));
    });

    const draft = draftAction;

    async function settlesAtOnce<T>(
      promise: Promise<T>,
    ): Promise<{ value?: T; reason?: unknown } | "pending"> {
      const settled = promise.then(
        (value) => ({ value }),
        (reason: unknown) => ({ reason }),
      );
      const later = new Promise<"pending">((resolve) => setImmediate(() => resolve("pending")));
      return Promise.race([settled, later]);
    }

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
          Array.from({ length: 96 }, (_, index) =>
            boards[index % 4]!.claimNext(claimers[index % 4]!.identity),
          ),
        );
        const claimed = outcomes.map((outcome) =>
          outcome.outcome === "claimed" ? outcome.record.id : "none",
        );
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
          agent: { ...bob, status: "departed", endedAt: expect.any(String) },
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
          ...bob,
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
  });
}
