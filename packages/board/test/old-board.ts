import { expect } from "vitest";
import type { Board } from "../src/index.js";

/**
 * What a bee of an older schema wrote, as SQL for tables under `prefix` (`bee_x.` or nothing): an
 * identity without a lease, an action it holds and one waiting.
 */
export function olderBeeRows(prefix = ""): string {
  return `
    INSERT INTO ${prefix}agents (identity, name, status, registered_at) VALUES ('agent:bob#0000000b', 'bob', 'active', 1);
    INSERT INTO ${prefix}actions (id, seq, kind, recipient, sender, body, state, claimed_by, claimed_at, created_at)
    VALUES ('act_000000000000000a', 1, 'job', '*', 'human', 'held', 'claimed', 'agent:bob#0000000b', 2, 1),
           ('act_000000000000000b', 2, 'job', '*', 'human', 'waiting', 'open', NULL, NULL, 1);`;
}

/**
 * The rows of `olderBeeRows`, read through a board of today: the held action under fence 1, the
 * identity active without a lease (it never lapses under a bee that does not renew it), and both
 * still claimable and completable.
 */
export async function expectOlderBeeRowsKept(board: Board): Promise<void> {
  const { records } = await board.list();
  expect(records.map((record) => [record.id, record.state, "fence" in record ? record.fence : null])).toEqual(
    [
      ["act_000000000000000a", "claimed", 1],
      ["act_000000000000000b", "open", null],
    ],
  );
  expect(await board.agents()).toEqual([
    { identity: "agent:bob#0000000b", name: "bob", status: "active", registeredAt: expect.any(String) },
  ]);
  const bob = "agent:bob#0000000b" as never;
  expect(await board.claimNext(bob)).toMatchObject({ record: { id: "act_000000000000000b", fence: 1 } });
  expect(await board.complete(bob, "act_000000000000000a" as never, "ok", { fence: 1 })).toMatchObject({
    outcome: "completed",
  });
}
