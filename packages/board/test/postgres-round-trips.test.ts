import { randomBytes } from "node:crypto";
import type { ActionId } from "@bridgeworks/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { type Board, openPostgresBoard } from "../src/index.js";
import { draftAction, RoundTripTap, refusal } from "../src/testing/index.js";
import { adminQuery, postgresHarness, postgresServerUrl, recheckIntervalMs } from "./postgres-harness.js";

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const draft = draftAction;

/** A board whose every byte to and from the server passes through a tap that counts round trips. */
async function tappedBoard(): Promise<{ board: Board; tap: RoundTripTap }> {
  const harness = await postgresHarness();
  cleanups.push(() => harness.dispose());
  const tap = await RoundTripTap.start(harness.url);
  cleanups.push(() => tap.close());
  const board = await openPostgresBoard({ url: tap.url, recheckIntervalMs });
  cleanups.push(() => board.close());
  return { board, tap };
}

/** Resolves once no round trip has started on the tap for 250 ms (bounded: a busy tap fails). */
async function quiet(tap: RoundTripTap): Promise<void> {
  const deadline = Date.now() + 10_000;
  let seen = tap.roundTrips;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    if (tap.roundTrips === seen) return;
    if (Date.now() > deadline) throw new Error("the tap never went quiet");
    seen = tap.roundTrips;
  }
}

test("every write is one round trip on PostgreSQL, and so is every read", async () => {
  const { board, tap } = await tappedBoard();
  const profile: Record<string, number> = {};
  const count = async <T>(name: string, operation: () => Promise<T>): Promise<T> => {
    const { value, roundTrips } = await tap.count(operation);
    profile[name] = roundTrips;
    return value;
  };
  // Counted on connections already open: opening one (the pool's first, a wait's LISTEN
  // connection) costs its handshake once, not per operation.
  await board.agents();

  const bob = await count("register", () => board.register("bob"));
  const bobAgain = await board.register("bob");
  const first = await count("post by a human", () => board.post(draft()));
  const second = await count("post by an agent", () => board.post(draft({ from: bob.identity })));
  await count("get", () => board.get(first.id));
  const { cursor } = await count("list", () => board.list({ limit: 1 }));
  await count("list from a cursor", () => board.list({ cursor }));
  await count("agents", () => board.agents());
  await count("waitForClaimable with records", () =>
    board.waitForClaimable(bob.identity, cursor, { timeoutMs: 10_000 }),
  );
  // The wait opened the LISTEN connection; its handshake and LISTEN finish after the wait answered,
  // and belong to no operation counted next.
  await quiet(tap);
  await count("claimNext", () => board.claimNext(bob.identity));
  await count("claim", () => board.claim(bob.identity, second.id));
  await count("claim lost", () => board.claim(bobAgain.identity, second.id));
  await count("claimNext with nothing to claim", () => board.claimNext(bobAgain.identity));
  await count("complete", () => board.complete(bob.identity, first.id, "done"));
  const third = await board.post(draft());
  await count("cancel", () => board.cancel("human", third.id));
  await count("depart releasing a claim", () => board.depart(bob.identity));

  expect(profile).toEqual({
    register: 1,
    "post by a human": 1,
    "post by an agent": 1,
    get: 1,
    list: 1,
    "list from a cursor": 1,
    agents: 1,
    "waitForClaimable with records": 2,
    claimNext: 1,
    claim: 1,
    "claim lost": 2,
    "claimNext with nothing to claim": 2,
    complete: 1,
    cancel: 1,
    "depart releasing a claim": 1,
  });
  expect(await board.get(second.id as ActionId)).toMatchObject({ state: "open" });
});

describe("a write is one transaction, whatever happens to its round trip", () => {
  test("a claimNext whose answer is lost after its commit fails busy and unsure, and the claim stands", async () => {
    const { board, tap } = await tappedBoard();
    const bob = await board.register("bob");
    const action = await board.post(draft());

    const cut = tap.cutNextAnswer(1);
    const error = await refusal(board.claimNext(bob.identity));
    await cut;
    expect([error.code, error.retryable, error.unsure]).toEqual(["busy", true, true]);
    expect(error.message).toContain("may or may not have been made");
    // The broken connection was dropped; the next call gets a new one and reads the claim.
    expect(await board.get(action.id)).toMatchObject({ state: "claimed", claimedBy: bob.identity });
  });

  test("a write cut before the server saw it changed nothing, and says it cannot tell", async () => {
    const { board, tap } = await tappedBoard();
    const before = await board.list();

    const cut = tap.cutNextRequest();
    const error = await refusal(board.post(draft()));
    await cut;
    expect([error.code, error.unsure]).toEqual(["busy", true]);
    expect(await board.list()).toEqual(before);
  });

  test("a read cut short fails busy and is sure nothing changed", async () => {
    const { board, tap } = await tappedBoard();
    const cut = tap.cutNextRequest();
    const error = await refusal(board.list());
    await cut;
    expect([error.code, error.unsure]).toEqual(["busy", false]);
  });

  test("a write the server refuses is rolled back whole, and the connection serves the next call", async () => {
    const harness = await postgresHarness();
    cleanups.push(() => harness.dispose());
    const writer = await harness.openBoard();
    cleanups.push(() => writer.close());
    const action = await writer.post(draft());
    // A role that may read the board and call its functions, but not write: the lock is refused first.
    const role = `bee_reader_${randomBytes(4).toString("hex")}`;
    const password = randomBytes(12).toString("hex");
    const serverUrl = postgresServerUrl();
    await adminQuery(serverUrl, `CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    cleanups.push(() => adminQuery(serverUrl, `DROP OWNED BY ${role}; DROP ROLE ${role}`).then(() => {}));
    await adminQuery(
      serverUrl,
      `GRANT USAGE ON SCHEMA ${harness.schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${harness.schema} TO ${role}`,
    );
    const url = new URL(harness.url);
    url.username = role;
    url.password = password;
    const reader = await openPostgresBoard({ url: url.toString(), recheckIntervalMs, maxConnections: 1 });
    cleanups.push(() => reader.close());

    const error = await reader.cancel("human", action.id).then(
      () => undefined,
      (reason: unknown) => reason as Error & { code?: string },
    );
    expect(error?.code).toBe("42501");
    expect(error?.message).toContain("permission denied for table board");
    // One connection: had the refused transaction been left open, this read would fail or block.
    expect(await reader.get(action.id)).toEqual(action);
    expect(await writer.get(action.id)).toEqual(action);
  });
});
