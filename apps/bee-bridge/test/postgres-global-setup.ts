import { clusterScript, startCluster } from "./postgres-cluster.js";

/**
 * Starts the PostgreSQL cluster bee's PostgreSQL tests share (with the board package's script) and
 * hands its URL to them in `BEE_TEST_POSTGRES_URL`; stops it (by its pid, through the script) at the
 * end. A URL already in the environment names a server someone else runs, and is used as it is.
 */
export default function startPostgres(): (() => void) | undefined {
  if (process.env.BEE_TEST_POSTGRES_URL) return undefined;
  const cluster = startCluster();
  process.env.BEE_TEST_POSTGRES_URL = cluster.url;
  return () => {
    clusterScript("stop", cluster.dir);
  };
}
