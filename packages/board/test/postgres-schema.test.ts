import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, test } from "vitest";
import { type Board, migrateBoard, openPostgresBoard } from "../src/index.js";
import { clientConfig, parsePostgresLocation } from "../src/postgres/connection.js";
import { migratePostgres } from "../src/postgres/schema.js";
import { killByPid, refusal, tickingClock } from "../src/testing/index.js";
import { expectOlderBeeRowsKept, olderBeeRows } from "./old-board.js";
import { adminQuery, postgresHarness, postgresServerUrl, recheckIntervalMs } from "./postgres-harness.js";
import { registerFromProcesses } from "./processes.js";

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
      await adminQuery(postgresServerUrl(), olderBeeRows(`${schema}.`));
      await expectOlderBeeRowsKept(await open(url));
      expect(await migrateBoard(url)).toEqual({ store: "postgres", previousVersion: 3, schemaVersion: 3 });
    },
  );

  test("eight processes opening a new board at once migrate it once and share one board", async () => {
    const harness = await newHarness();
    const identities = await registerFromProcesses(harness, children, 8);
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
