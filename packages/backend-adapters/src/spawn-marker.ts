import { execFileSync } from "node:child_process";
import { randomBytes as cryptoRandomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { SpawnMarker } from "@bridgeworks/protocol";
import { type ProcessIdentity, readProcStat } from "./process-identity.js";

/** The variable a CLI (and every child that inherits its environment) carries its turn's marker in. */
export const spawnMarkerVariable = "FLOOT_SPAWN_MARKER";

/** 16 bytes from a CSPRNG, hex: unguessable, so no unrelated process carries it. */
export function mintSpawnMarker(randomBytes: (size: number) => Uint8Array = cryptoRandomBytes): SpawnMarker {
  return SpawnMarker.parse(Buffer.from(randomBytes(16)).toString("hex"));
}

/** A process as the process table shows it: its identity and its environment's `NAME=value` entries. */
export interface ProcessEnvironment {
  identity: ProcessIdentity;
  environment: readonly string[];
}

/** Lazily, so the environments of other processes are dropped as soon as they are looked at. */
export type ProcessTableReader = () => Iterable<ProcessEnvironment>;

/**
 * Linux: every numeric entry of /proc owned by this user, its stat and its environ. Another user's
 * processes are never ours to fence, even for a root daemon that could read them; processes that
 * exited meanwhile and zombies (their environ is gone) are skipped.
 */
export function* readLinuxProcessTable(
  uid: number | undefined = process.getuid?.(),
): Generator<ProcessEnvironment> {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      if (uid !== undefined && statSync(`/proc/${pid}`).uid !== uid) continue;
      // Stat before environ: if the pid is reused in between, the identity names the older process,
      // which fencing then leaves alone, instead of naming a stranger that fencing would kill.
      const status = readProcStat(pid);
      if (status.zombie) continue;
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      yield { identity: { pid, startTime: status.startTime }, environment: environ.split("\0") };
    } catch {
      // Unreadable or gone: not ours to fence.
    }
  }
}

/**
 * Best effort where there is no /proc (macOS): `ps -E` appends the environment to the command line,
 * space-separated and only for the caller's own processes, so entries cannot be told from arguments.
 * A marker is 32 hex digits without spaces, so an exact `NAME=value` word still names it; a process
 * whose arguments quote that word would be taken for a carrier. The start time is `lstart`, as
 * `readProcessStatus` reads it there.
 */
export function* readPsProcessTable(): Generator<ProcessEnvironment> {
  let out: string;
  try {
    out = execFileSync("ps", ["-A", "-E", "-ww", "-o", "pid=,stat=,lstart=,command="], {
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    });
  } catch {
    return;
  }
  for (const line of out.split("\n")) {
    const [pid = "", state = "", ...rest] = line.trim().split(/\s+/);
    if (!/^\d+$/.test(pid) || state.startsWith("Z")) continue;
    // lstart is five words: "Mon Nov 30 12:00:00 2026".
    yield {
      identity: { pid: Number(pid), startTime: rest.slice(0, 5).join(" ") },
      environment: rest.slice(5),
    };
  }
}

export const readProcessTable: ProcessTableReader = () =>
  process.platform === "linux" ? readLinuxProcessTable() : readPsProcessTable();

/**
 * Every live process (the caller itself excepted) whose environment carries exactly
 * `FLOOT_SPAWN_MARKER=<marker>`, by marker, reading the process table once for all of them.
 */
export function findProcessesBySpawnMarker(
  markers: readonly string[],
  readTable: ProcessTableReader = readProcessTable,
): Map<SpawnMarker, ProcessIdentity[]> {
  const found = new Map<SpawnMarker, ProcessIdentity[]>();
  const byEntry = new Map<string, SpawnMarker>();
  for (const marker of markers) {
    const valid = SpawnMarker.parse(marker);
    found.set(valid, []);
    byEntry.set(`${spawnMarkerVariable}=${valid}`, valid);
  }
  if (byEntry.size === 0) return found;
  for (const { identity, environment } of readTable()) {
    if (identity.pid === process.pid) continue;
    for (const entry of environment) {
      const marker = byEntry.get(entry);
      if (marker === undefined) continue;
      found.get(marker)!.push(identity);
      break;
    }
  }
  return found;
}

/** A CLI's environment with its spawn marker, when it has one. */
export function withSpawnMarker(
  env: Readonly<Record<string, string>>,
  marker: string | undefined,
): Record<string, string> {
  return marker === undefined ? { ...env } : { ...env, [spawnMarkerVariable]: marker };
}
