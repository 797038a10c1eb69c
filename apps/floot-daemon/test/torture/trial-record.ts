import type { KillPoint } from "./points.js";
import type { CallLabel } from "./script.js";
import type { Violation } from "./trial-checks.js";

export interface TrialRecord {
  trial: number;
  point: KillPoint;
  plan: string;
  /** The planned kill happened (a point the turn never reached does not fire). */
  fired: boolean;
  phases: string[];
  effectLines: Record<CallLabel, number>;
  violations: Violation[];
  ms: number;
  /** Where the trial's time went, ms per step. */
  steps: Record<string, number>;
  /** A trial that found a violation: the last lines each of its daemons logged, in start order. */
  daemonLogs?: string[];
  /** Keeper mode only. */
  keeper?: {
    /** Unfinished turns whose CLI ran under a live keeper when the last daemon started. */
    aliveAtRestart: number;
    /** Of those, how many did not go on to `completed` (each also a violation). */
    needless: number;
    /** Turns whose whole spool was compared with the journal. */
    spoolsChecked: number;
    /** mid-spool: the spool held more than `stdout_through` at the SIGKILL. */
    spoolAhead?: boolean;
    /** adoption: the restarted daemon died at the adoption point. */
    adoptionKilled?: boolean;
  };
}
