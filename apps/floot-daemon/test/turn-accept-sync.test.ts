import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { textReply } from "@bridgeworks/model-double";
import type { TurnRecord } from "@bridgeworks/protocol";
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

test("a turn whose accept cannot be synced to disk is answered 500 and withdrawn: it never runs", async () => {
  world = await FlootWorld.create("claude", { steps: [textReply("[unsynced]", "ran")] });
  await world.startDaemon({ NODE_OPTIONS: `--import ${failingWalSync}` });
  const session = await world.createSession();

  const refused = await world.client
    .request("POST", `/v1/sessions/${session.id}/turns`, { prompt: "[unsynced] run once" })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  expect(refused).toBeInstanceOf(ClientError);
  expect((refused as ClientError).status).toBe(500);
  expect((refused as ClientError).message).toMatch(
    /not accepted: the journal could not be synced to disk \(.*EIO.*\); it is withdrawn/,
  );

  const { turns } = await world.client.request<{ turns: TurnRecord[] }>(
    "GET",
    `/v1/sessions/${session.id}/turns`,
  );
  expect(turns).toHaveLength(1);
  expect(turns[0]).toMatchObject({ phase: "failed", error: { code: "journal_sync_failed" } });
  // Nothing starts it later: the session is free, and the model never heard the prompt.
  await sleep(500);
  expect(world.requestsWith("[unsynced]")).toBe(0);
  const { turns: after } = await world.client.request<{ turns: TurnRecord[] }>(
    "GET",
    `/v1/sessions/${session.id}/turns`,
  );
  expect(after.map((turn) => turn.phase)).toEqual(["failed"]);
}, 60_000);
