import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The throwaway cluster `scripts/postgres-test-cluster.mjs start` prints. */
export interface TestCluster {
  dir: string;
  url: string;
  socketUrl: string;
  port: number;
  pid: number;
}

const script = fileURLToPath(new URL("../../../scripts/postgres-test-cluster.mjs", import.meta.url));

/**
 * Runs the cluster script, failing with its output: PostgreSQL tests never skip, so a server that
 * cannot be started is a failure that says why.
 */
export function postgresClusterScript(
  command: "start" | "restart" | "halt" | "resume" | "stop",
  dir?: string,
): string {
  const result = spawnSync(process.execPath, [script, command, ...(dir === undefined ? [] : [dir])], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 600_000,
  });
  if (result.status !== 0) {
    throw new Error(
      `could not ${command} the PostgreSQL test cluster (scripts/postgres-test-cluster.mjs installs ` +
        `Debian's postgresql when run as root):\n${result.error?.message ?? ""}${result.stderr}`,
    );
  }
  return result.stdout;
}

export function startPostgresCluster(): TestCluster {
  return JSON.parse(postgresClusterScript("start")) as TestCluster;
}

/** The server the project's `postgresGlobalSetup` started (or the one the environment names). */
export function postgresServerUrl(): string {
  const url = process.env.BEE_TEST_POSTGRES_URL;
  if (url === undefined || url === "") {
    throw new Error(
      "BEE_TEST_POSTGRES_URL is not set: the project's vitest globalSetup (postgresGlobalSetup from " +
        "@bridgeworks/test-harness) starts a PostgreSQL cluster and sets it; run the tests through vitest",
    );
  }
  return url;
}

/**
 * A vitest globalSetup: starts the cluster a project's tests share and hands its URL to them in
 * `BEE_TEST_POSTGRES_URL`; stops it (by its pid, through the script) at the end. A URL already in
 * the environment names a server someone else runs, and is used as it is.
 */
export function postgresGlobalSetup(): (() => void) | undefined {
  if (process.env.BEE_TEST_POSTGRES_URL) return undefined;
  const cluster = startPostgresCluster();
  process.env.BEE_TEST_POSTGRES_URL = cluster.url;
  return () => {
    postgresClusterScript("stop", cluster.dir);
  };
}
