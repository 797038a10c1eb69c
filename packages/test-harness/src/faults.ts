import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** What the fault preload does at a trace point: SIGKILL the process, or block its thread for `ms`. */
export interface FaultRule {
  action: "kill" | "hold";
  /** For `hold`; default 60 s. */
  ms?: number;
  /** Let this many hits pass first. */
  skip?: number;
}

/** Diagnostics channel name (e.g. `floot:gate:committed`) -> what happens there. */
export type FaultPlan = Readonly<Record<string, FaultRule>>;

/** One fault that fired, as the preload logged it just before acting. */
export interface FaultHit {
  point: string;
  action: FaultRule["action"];
  hit: number;
  pid: number;
  data: unknown;
}

/** The test-only module a faulted daemon loads with `node --import`; it is never bundled. */
export const faultPreloadPath = fileURLToPath(new URL("../preload/fault-injection.mjs", import.meta.url));

/** Bench-only: a module that measures its process's event-loop delay, one window per SIGUSR2. */
export const loopDelayPreloadPath = fileURLToPath(
  new URL("../preload/event-loop-delay.mjs", import.meta.url),
);

/**
 * Names that belong to tests only. A production bundle that contains one ships a test knob
 * (repo-checks looks for them in every app bundle).
 */
export const testOnlyNames: readonly string[] = [
  "FLOOT_FAULTS",
  "FLOOT_TEST_",
  "fault-injection",
  "FLOOT_LOOP_DELAY_FILE",
  "event-loop-delay",
  "sleepSync",
  "holdBeforeSpawnMs",
  "holdAfterSpawnMs",
];

/** The node arguments and environment that start a process with `plan` injected, logging to `logPath`. */
export function faultInjection(
  plan: FaultPlan,
  logPath: string,
): { nodeArgs: string[]; env: Record<string, string> } {
  return {
    nodeArgs: ["--import", faultPreloadPath],
    env: { FLOOT_FAULTS: JSON.stringify(plan), FLOOT_FAULTS_LOG: logPath },
  };
}

/** The faults that fired so far, in order. */
export function readFaultLog(logPath: string): FaultHit[] {
  if (!existsSync(logPath)) return [];
  return readFileSync(logPath, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as FaultHit);
}
