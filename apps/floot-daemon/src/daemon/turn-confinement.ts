import { join, relative, resolve } from "node:path";
import type { ConfinementSpec } from "@bridgeworks/backend-adapters";
import type { SessionSandbox } from "@bridgeworks/protocol";
import { daemonFileName, journalFileName, lockFileName } from "../state-dir.js";
import { daemonKeyFileName } from "./daemon-key.js";
import { uiSessionsFileName } from "./ui-auth.js";

export interface ConfinementPlaces {
  stateDir: string;
  /** The daemon's runtime dirs: its API socket and every turn's credential files. */
  runtimeRoot: string;
}

export interface TurnPlaces {
  workspace: string;
  /** The turn's own credential dir in the runtime dir (its commands read the secrets it was given). */
  credentialDir: string;
  /** A scratch dir of the session's, for a backend whose sandbox gives commands no temp dir of their own. */
  scratchDir?: string;
  /** Other sessions' workspaces outside the state dir. */
  otherWorkspaces: readonly string[];
}

/** The state dir's own files, which no file tool may touch even where the workspace lies in the state dir. */
const stateFiles = [
  daemonFileName,
  daemonKeyFileName,
  uiSessionsFileName,
  journalFileName,
  `${journalFileName}-wal`,
  `${journalFileName}-shm`,
  lockFileName,
];

/**
 * What a confined turn may reach: commands see neither the state dir nor the runtime dirs (the
 * workspace and the turn's credential dir carved back in) nor other sessions' workspaces; file tools
 * are denied the daemon's files and other workspaces by rule. Undefined: the session runs unconfined.
 */
export function confinementOf(
  sandbox: SessionSandbox | undefined,
  places: ConfinementPlaces,
  turn: TurnPlaces,
): ConfinementSpec | undefined {
  if (sandbox?.enabled === false) return undefined;
  const workspace = resolve(turn.workspace);
  const others = turn.otherWorkspaces
    .map((path) => resolve(path))
    .filter((path) => path !== workspace && !within(workspace, path));
  // A workspace inside another session's: that one is hidden but ours carved back in.
  const scratch = turn.scratchDir === undefined ? [] : [turn.scratchDir];
  const carvedOut = [workspace, turn.credentialDir, ...scratch];
  const hidden = [
    places.stateDir,
    places.runtimeRoot,
    ...turn.otherWorkspaces.map((path) => resolve(path)).filter((path) => path !== workspace),
  ];
  const toolsDenied = within(places.stateDir, workspace)
    ? [
        ...stateFiles.map((name) => join(places.stateDir, name)),
        `${join(places.stateDir, "bridges")}/`,
        join(places.stateDir, "sessions", "*", "session.json"),
      ]
    : [`${places.stateDir}/`];
  return {
    hidden,
    hiddenFromTools: [...toolsDenied, `${places.runtimeRoot}/`, ...others.map((path) => `${path}/`)],
    carvedOut: carvedOut.filter((path) => hidden.some((root) => within(root, path))),
    writable: [...(sandbox?.writablePaths ?? []), ...scratch],
    allowedHosts: sandbox?.allowedHosts ?? [],
  };
}

/** Whether `path` is `root` or lies under it. */
export function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith("/"));
}

/** Claude Code's file tools (2.1.332) and the input field naming the path each touches. */
const fileToolPaths: Readonly<Record<string, readonly string[]>> = {
  Read: ["file_path"],
  Write: ["file_path"],
  Edit: ["file_path"],
  MultiEdit: ["file_path"],
  NotebookEdit: ["notebook_path"],
  Glob: ["path"],
  Grep: ["path"],
  LS: ["path"],
};

/**
 * The path a file tool call would touch that a confined turn may not: inside a hidden tree and outside
 * its carve-outs (relative paths resolve against the workspace). Undefined when the call keeps inside.
 * Claude Code asks about a file tool outside its working dir; such a call is refused without asking.
 */
export function hiddenPathOf(
  spec: ConfinementSpec,
  workspace: string,
  toolName: string,
  input: Readonly<Record<string, unknown>>,
): string | undefined {
  for (const field of fileToolPaths[toolName] ?? []) {
    const value = input[field];
    if (typeof value !== "string") continue;
    const path = resolve(workspace, value);
    const hidden = spec.hidden.some((root) => within(root, path));
    const carved = [workspace, ...spec.carvedOut].some((root) => within(root, path));
    if (hidden && !carved) return path;
  }
  return undefined;
}
