import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { postgresServerUrl } from "@bridgeworks/test-harness";
import pg from "pg";
import { openPostgresBoard } from "../src/index.js";
import type { BoardContractHarness } from "../src/testing/index.js";

export { postgresServerUrl };

export const boardProcessScript = fileURLToPath(
  new URL("./fixtures/postgres-board-process.mjs", import.meta.url),
);

// Longer than any test's timeout: a wake-up the tests see came from LISTEN/NOTIFY.
export const recheckIntervalMs = 600_000;

/** Runs one statement as the server's admin, on a connection of its own. */
export async function adminQuery(serverUrl: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: serverUrl });
  client.on("error", () => {});
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

/** The board location for `schema` in the server's database. */
export function schemaUrl(serverUrl: string, schema: string): string {
  const url = new URL(serverUrl);
  url.searchParams.set("schema", schema);
  return url.toString();
}

/**
 * A fresh board on the test server: its own schema (creating a database costs a checkpoint, a
 * schema costs nothing), dropped with everything in it at dispose.
 */
export async function postgresHarness(
  serverUrl = postgresServerUrl(),
): Promise<BoardContractHarness & { url: string; schema: string }> {
  const schema = `bee_test_${randomBytes(6).toString("hex")}`;
  const url = schemaUrl(serverUrl, schema);
  return {
    url,
    schema,
    openBoard: (deps = {}) => openPostgresBoard({ ...deps, url, recheckIntervalMs }),
    // The URL travels in the environment, as BEE_BOARD does for a bridge, never in argv.
    spawnBoardProcess: () =>
      spawn(process.execPath, [boardProcessScript], {
        env: { ...process.env, BEE_BOARD: url, BEE_TEST_RECHECK_MS: String(recheckIntervalMs) },
        stdio: ["pipe", "pipe", "inherit"],
      }),
    dispose: async () => {
      await adminQuery(serverUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    },
  };
}
