import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

import { postgresServerUrl } from "@bridgeworks/test-harness";

export {
  postgresClusterScript as clusterScript,
  postgresServerUrl,
  startPostgresCluster as startCluster,
  type TestCluster,
} from "@bridgeworks/test-harness";

/** A board location on `serverUrl` in a schema of its own (a fresh, empty board). */
export function freshBoardUrl(serverUrl = postgresServerUrl()): { url: string; schema: string } {
  const schema = `bee_bridge_test_${randomBytes(6).toString("hex")}`;
  const url = new URL(serverUrl);
  url.searchParams.set("schema", schema);
  return { url: url.toString(), schema };
}

interface PgClient {
  on(event: "error", listener: () => void): void;
  connect(): Promise<void>;
  query(text: string): Promise<unknown>;
  end(): Promise<void>;
}

/**
 * Drops a test's schema, on a connection of its own. `pg` is the board's dependency, not bee's, so
 * it is loaded from the board package (the tests only need it to clean up a server they did not start).
 */
export async function dropSchema(serverUrl: string, schema: string): Promise<void> {
  const fromBoard = createRequire(
    fileURLToPath(new URL("../node_modules/@bridgeworks/board/package.json", import.meta.url)),
  );
  const pg = fromBoard("pg") as { Client: new (config: { connectionString: string }) => PgClient };
  const client = new pg.Client({ connectionString: serverUrl });
  client.on("error", () => {});
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
