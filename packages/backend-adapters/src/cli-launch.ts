import type { SpawnMarker } from "@bridgeworks/protocol";
import type { ProcessIdentity } from "./process-identity.js";

// What starting a CLI takes and gives, whoever starts it: the CLI core (cli-process.ts) or the keeper
// (kept-cli.ts), which share these types and not each other's code.

export interface CliLaunch {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Written to stdin, then closed. Without it stdin is closed at once. */
  stdin?: string;
  /**
   * Put into the environment as `FLOOT_SPAWN_MARKER` (over any value `env` has), so the process and
   * its children can be found by `findProcessesBySpawnMarker` even if its pid was never recorded.
   */
  spawnMarker?: SpawnMarker;
  /** Appended to the error when the command cannot be found or run, e.g. how to install it. */
  installHint?: string;
  /**
   * The CLI's nice value (0-19), given to it and to its session's scheduling group as soon as it has
   * started (`lowerProcessPriority`); what it starts later inherits it. Without it the CLI runs at the
   * caller's priority.
   */
  nice?: number;
}

export interface CliExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last stderr the process wrote, for error messages. */
  stderrTail: string;
  /** Set when stdout carried a line longer than the limit: the process group was ended then. */
  lineTooLong?: { limitBytes: number };
  /**
   * Set when this process stopped reading a kept CLI that still runs (`detach`, or the keeper went
   * away): how the CLI ends is for the next reader to learn.
   */
  unknown?: true;
}

export interface CliProcessHooks {
  /**
   * Called with the new process's identity before any of its output is read, so a caller can
   * journal it first: after a crash the process can still be found and fenced.
   */
  onSpawned(identity: ProcessIdentity): void;
  /** A stdout line; with `position` when the keeper reads it (where it starts and the next one does). */
  onLine(line: string, position?: LinePosition): void;
}

/** Where a line sits in a kept CLI's stdout; `replayed`: read again for an adopted CLI, journaled before. */
export interface LinePosition {
  offset: number;
  next: number;
  replayed: boolean;
}

export interface RunningCli {
  identity: ProcessIdentity;
  exited: Promise<CliExit>;
  /** TERM to the process group, KILL after `graceMs` if anything is left. */
  stop(graceMs?: number): Promise<CliExit>;
  /**
   * A kept CLI only: stop reading it and leave it running to its keeper (a daemon that stops but
   * keeps its turns); `exited` resolves `unknown`, and no line is handed on after this.
   */
  detach?(): void;
  /** A kept CLI only: the keeper forgets it and removes its spool (once its end is journaled). */
  release?(): void;
}
