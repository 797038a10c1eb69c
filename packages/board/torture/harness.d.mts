// Types of harness.mjs (plain JavaScript: `pnpm torture` runs it on plain node, against dist/).

export interface TortureOptions {
  store: "sqlite" | "postgres";
  /** An absolute SQLite path or a postgres:// URL. */
  location: string;
  trials: number;
  seed?: number;
  /** The board's lease TTL for the run; default 1000. */
  ttlMs?: number;
  /** Trials at once; default 8. */
  concurrency?: number;
  /** How late a dead holder's action may become claimable again; default ttlMs + 1000. */
  reclaimBoundMs?: number;
  /** PostgreSQL: restarts the server (trials every `restartEvery` do, while their claimer holds its action). */
  restart?: () => Promise<unknown>;
  restartEvery?: number;
}

export interface TortureViolation {
  trial: number | null;
  what: string;
  [detail: string]: unknown;
}

export interface TortureSummary {
  store: string;
  trials: number;
  seed: number;
  ttlMs: number;
  concurrency: number;
  kills: Record<string, number>;
  points: Record<string, number>;
  outcomes: {
    completedBeforeDeath: number;
    diedBeforeClaim: number;
    reclaimedAfterDeath: number;
    lostLeaseAlive: number;
  };
  restarts: { trial: number; ms: number }[];
  reclaimLatencyMs: {
    count: number;
    max: number;
    p50: number;
    p99: number;
    bound: number;
    overBound: number;
    restartOverlap: number;
  };
  zombieCompletes: { attempted: number; refusedStaleFence: number; accepted: number };
  actions: { posted: number; done: number; lost: number; completedTwice: number };
  violations: TortureViolation[];
}

export const killPoints: readonly string[];
export function seededRandom(seed: number): () => number;
export function runTorture(options: TortureOptions): Promise<TortureSummary>;
export function startCluster(): Promise<{
  url: string;
  restart: () => Promise<string>;
  stop: () => Promise<string>;
}>;
