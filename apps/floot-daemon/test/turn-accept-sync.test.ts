import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { textReply } from "@bridgeworks/model-double";
import { afterEach, expect, test } from "vitest";
import { ClientError } from "../src/client/api-client.js";
import { FlootWorld } from "./daemon-harness.js";

// A turn is answered 202 only once its accept is on disk. When the journal's fsync fails (the disk
// lost a write: EIO), the submitter is answered 500, naming it, and the turn is withdrawn, as a FULL
// commit that failed would not have recorded it: a client that submits again must not get two runs.

const failingWalSync = fileURLToPath(new URL("./faults/failing-wal-sync.mjs", import.meta.url));

let world: FlootWorld | undefined;
afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

/** The error a request the daemon refused rejects with. */
async function refusal(request: Promise<unknown>): Promise<ClientError> {
  const error = await request.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(ClientError);
  return error as ClientError;
}

test("a turn whose accept cannot be synced to disk is answered 500 and withdrawn: it never runs", async () => {
  world = await FlootWorld.create("claude", { steps: [textReply("[unsynced]", "ran")] });
  await world.startDaemon({ NODE_OPTIONS: `--import ${failingWalSync}` });
  const session = await world.createSession();

  const refused = await refusal(world.send(session.id, "[unsynced] run once"));
  expect(refused.status).toBe(500);
  expect(refused.message).toMatch(
    /not accepted: the journal could not be synced to disk \(.*EIO.*\); it is withdrawn/,
  );

  const turns = await world.turns(session.id);
  expect(turns).toHaveLength(1);
  expect(turns[0]).toMatchObject({ phase: "failed", error: { code: "journal_sync_failed" } });
  // Nothing starts it later: the session is free, and the model never heard the prompt.
  await sleep(500);
  expect(world.requestsWith("[unsynced]")).toBe(0);
  expect((await world.turns(session.id)).map((turn) => turn.phase)).toEqual(["failed"]);
}, 60_000);

test("a turn queued behind a running one whose accept cannot be synced is cancelled and answered 500", async () => {
  // The first turn's model never answers: it stays running while the second is submitted behind it.
  world = await FlootWorld.create("claude", {
    steps: [{ response: { events: [{ type: "stall" }] }, repeat: true }],
  });
  // One fdatasync goes through (the first turn's accept), every later one fails.
  await world.startDaemon({ NODE_OPTIONS: `--import ${failingWalSync}`, FAILING_WAL_SYNC_AFTER: "1" });
  const session = await world.createSession();
  const first = await world.send(session.id, "[first] hold on");
  await world.waitForTurn(first.id, (turn) => turn.phase === "running", "the first turn runs");

  const refused = await refusal(world.send(session.id, "[queued] after it"));
  expect(refused.status).toBe(500);
  expect(refused.message).toMatch(/not accepted: .*EIO.*; it is withdrawn/);
  const turns = await world.turns(session.id);
  expect(turns.map((turn) => turn.phase)).toEqual(["running", "cancelled"]);
  expect(turns[1]).toMatchObject({ error: { code: "journal_sync_failed" } });

  // The first turn's end is not synced either (logged); the withdrawn one does not start after it.
  await world.client.request("POST", `/v1/turns/${first.id}/cancel`);
  await world.waitForEnd(first.id);
  await sleep(500);
  expect(world.requestsWith("[queued]")).toBe(0);
  expect((await world.turns(session.id)).map((turn) => turn.phase)).toEqual(["cancelled", "cancelled"]);
}, 60_000);
