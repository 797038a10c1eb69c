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
 * Runs the cluster script, failing with its output: the PostgreSQL tests never skip, so a server
 * that cannot be started is a failure that says why.
 */
export function clusterScript(
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
      `could not ${command} the PostgreSQL test cluster (the board's PostgreSQL tests need one; ` +
        `scripts/postgres-test-cluster.mjs installs Debian's postgresql when run as root):\n` +
        `${result.error?.message ?? ""}${result.stderr}`,
    );
  }
  return result.stdout;
}

export function startCluster(): TestCluster {
  return JSON.parse(clusterScript("start")) as TestCluster;
}
