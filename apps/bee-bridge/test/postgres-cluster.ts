import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** The throwaway cluster `scripts/postgres-test-cluster.mjs start` prints (the board package's script). */
export interface TestCluster {
  dir: string;
  url: string;
  port: number;
  pid: number;
}

const script = fileURLToPath(new URL("../../../scripts/postgres-test-cluster.mjs", import.meta.url));

/**
 * Runs the cluster script, failing with its output: the PostgreSQL tests never skip, so a server
 * that cannot be started is a failure that says why.
 */
export function clusterScript(command: "start" | "halt" | "resume" | "stop", dir?: string): string {
  const result = spawnSync(process.execPath, [script, command, ...(dir === undefined ? [] : [dir])], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 600_000,
  });
  if (result.status !== 0) {
    throw new Error(
      `could not ${command} the PostgreSQL test cluster (bee's PostgreSQL tests need one; ` +
        `scripts/postgres-test-cluster.mjs installs Debian's postgresql when run as root):\n` +
        `${result.error?.message ?? ""}${result.stderr}`,
    );
  }
  return result.stdout;
}

export function startCluster(): TestCluster {
  return JSON.parse(clusterScript("start")) as TestCluster;
}

/** The server the globalSetup started (or the one the environment names). */
export function postgresServerUrl(): string {
  const url = process.env.BEE_TEST_POSTGRES_URL;
  if (url === undefined || url === "") {
    throw new Error(
      "BEE_TEST_POSTGRES_URL is not set: bee-bridge's vitest globalSetup (test/postgres-global-setup.ts) " +
        "starts a PostgreSQL cluster and sets it; run the tests through vitest",
    );
  }
  return url;
}

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
