import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, test } from "vitest";
import { type Board, migrateBoard, openPostgresBoard } from "../src/index.js";
import { clientConfig, parsePostgresLocation } from "../src/postgres/connection.js";
import { migratePostgres } from "../src/postgres/schema.js";
import { BoardProcess, killByPid, refusal, tickingClock } from "../src/testing/index.js";
import { adminQuery, postgresHarness, postgresServerUrl, recheckIntervalMs } from "./postgres-harness.js";

const boards: Board[] = [];
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(children.splice(0).map(killByPid));
  await Promise.all(boards.splice(0).map((board) => board.close()));
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function newHarness() {
  const harness = await postgresHarness();
  cleanups.push(() => harness.dispose());
  return harness;
}

async function open(url: string) {
  const board = await openPostgresBoard({ url, recheckIntervalMs, ...tickingClock() });
  boards.push(board);
  return board;
}

/** Leaves the board at `url` as a bee of schema `version` would have: its tables and functions, no later ones. */
async function migrateOnlyTo(url: string, version: number): Promise<void> {
  const { connectionString, schema } = parsePostgresLocation(url, "url");
  const client = new pg.Client(
    clientConfig({ connectionString, applicationName: "test", connectTimeoutMs: 5000 }),
  );
  await client.connect();
  try {
    await migratePostgres(client, schema, randomBytes, version);
  } finally {
    await client.end();
  }
}

describe("the schema", () => {
  test("migrateBoard creates it on first use, reports the versions, and finds it current after", async () => {
    const { url, schema } = await newHarness();
    expect(await migrateBoard(url)).toEqual({ store: "postgres", previousVersion: 0, schemaVersion: 3 });
    expect(await migrateBoard(url)).toEqual({ store: "postgres", previousVersion: 3, schemaVersion: 3 });
    const names = async (what: "table" | "routine", from: "tables" | "routines") =>
      (
        await adminQuery(
          postgresServerUrl(),
          `SELECT ${what}_name AS name FROM information_schema.${from} WHERE ${what}_schema = '${schema}' ORDER BY 1`,
        )
      ).rows.map((row) => row.name);
    expect(await names("table", "tables")).toEqual(["actions", "agents", "board", "schema_migrations"]);
    expect(await names("routine", "routines")).toEqual([
      "cancel",
      "claim",
      "claim_next",
      "complete",
      "decide",
      "end_agent",
      "expire_leases",
      "expire_locked",
      "insert_action",
      "insert_agent",
      "release_locked",
      "renew_lease",
      "set_lease_ttl",
    ]);
    const board = await open(url);
    expect((await board.register("bee")).status).toBe("active");
  });

  test.each([1, 2])(
    "a board an older bee left at schema version %i is brought up to date on open and keeps every record",
    async (version) => {
      const { url, schema } = await newHarness();
      await migrateOnlyTo(url, version);
      // What that bee wrote: an identity (no lease), an action it holds and one waiting.
      await adminQuery(
        postgresServerUrl(),
        `INSERT INTO ${schema}.agents (identity, name, status, registered_at) VALUES ('agent:bob#0000000b', 'bob', 'active', 1);
         INSERT INTO ${schema}.actions (id, seq, kind, recipient, sender, body, state, claimed_by, claimed_at, created_at)
         VALUES ('act_000000000000000a', 1, 'job', '*', 'human', 'held', 'claimed', 'agent:bob#0000000b', 2, 1),
                ('act_000000000000000b', 2, 'job', '*', 'human', 'waiting', 'open', NULL, NULL, 1)`,
      );

      const board = await open(url);
      const { records } = await board.list();
      expect(
        records.map((record) => [record.id, record.state, "fence" in record ? record.fence : null]),
      ).toEqual([
        ["act_000000000000000a", "claimed", 1],
        ["act_000000000000000b", "open", null],
      ]);
      // An older bee's identity holds no lease: it never lapses under a bee that does not renew it.
      expect((await board.agents())[0]).toMatchObject({ identity: "agent:bob#0000000b", status: "active" });
      expect((await board.agents())[0]?.status === "active" && (await board.agents())[0]).not.toHaveProperty(
        "leaseExpiresAt",
      );
      expect(await board.claimNext("agent:bob#0000000b" as never)).toMatchObject({
        outcome: "claimed",
        record: { id: "act_000000000000000b", fence: 1 },
      });
      expect(
        await board.complete("agent:bob#0000000b" as never, "act_000000000000000a" as never, "ok", {
          fence: 1,
        }),
      ).toMatchObject({ outcome: "completed" });
      expect(await migrateBoard(url)).toEqual({ store: "postgres", previousVersion: 3, schemaVersion: 3 });
    },
  );

  test("eight processes opening a new board at once migrate it once and share one board", async () => {
    const harness = await newHarness();
    const started = await Promise.all(
      Array.from({ length: 8 }, () => {
        const child = harness.spawnBoardProcess();
        children.push(child);
        return BoardProcess.start(child);
      }),
    );
    const identities = await Promise.all(
      started.map(async (each) => (await each.call("register", "bee")).identity),
    );
    const board = await open(harness.url);
    expect((await board.agents()).map((agent) => agent.identity).sort()).toEqual([...identities].sort());
    const applied = await adminQuery(
      postgresServerUrl(),
      `SELECT version FROM ${harness.schema}.schema_migrations`,
    );
    expect(applied.rows).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }]);
  });

  test("a board written by a newer bee is refused, not misread", async () => {
    const { url, schema } = await newHarness();
    await migrateBoard(url);
    await adminQuery(postgresServerUrl(), `INSERT INTO ${schema}.schema_migrations (version) VALUES (99)`);
    const error = await refusal(openPostgresBoard({ url }));
    expect(error.code).toBe("incompatible_store");
    expect(error.message).toContain("schema version 99");
    expect((await refusal(migrateBoard(url))).code).toBe("incompatible_store");
  });
});
