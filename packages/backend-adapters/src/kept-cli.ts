import type { CliExit, CliLaunch, CliProcessHooks, RunningCli } from "./cli-launch.js";
import type { KeeperClient } from "./keeper-client.js";
import type { ProcessIdentity } from "./process-identity.js";
import { withSpawnMarker } from "./spawn-marker.js";

/** A CLI run through the keeper: by which keeper, under which id (the turn's), and where to read from. */
export interface KeptCliDeps {
  keeper: KeeperClient;
  id: string;
  /**
   * A CLI the keeper already runs (a daemon restarted under it): its identity as journaled, and where
   * its journaled lines end. Its lines are read again from the start (the caller's translator rebuilds
   * its state from them), and those before `through` are marked `replayed`.
   */
  adopt?: { identity: ProcessIdentity; through: number };
}

/**
 * `startCliProcess` for a CLI the keeper owns: the keeper spawns it (so it outlives this process),
 * writes its stdin, and streams its lines with their byte offsets; `hooks.onLine` hears each with where
 * the next one starts. A CLI already kept is attached to instead, from its first line.
 */
export async function startKeptCli(
  launch: CliLaunch,
  hooks: CliProcessHooks,
  deps: KeptCliDeps,
  maxLineBytes: number,
): Promise<RunningCli> {
  const { keeper, id } = deps;
  let identity: ProcessIdentity;
  if (deps.adopt) {
    identity = deps.adopt.identity;
  } else {
    const started = await keeper.spawn(id, {
      command: launch.command,
      args: [...launch.args],
      cwd: launch.cwd,
      env: withSpawnMarker(launch.env, launch.spawnMarker),
      ...(launch.nice !== undefined && { nice: launch.nice }),
      stdin: launch.stdin ?? "",
    });
    identity = { pid: started.pid, startTime: started.startTime };
    try {
      hooks.onSpawned(identity);
    } catch (error) {
      // Nobody could fence a process whose identity was never recorded: end it now.
      keeper.release(id);
      throw error;
    }
  }
  const through = deps.adopt?.through ?? 0;
  let lineTooLong: CliExit["lineTooLong"];
  let detached = false;
  let stopListening = () => {};
  let resolveExit: (exit: CliExit) => void = () => {};
  const exited = new Promise<CliExit>((resolve) => {
    resolveExit = resolve;
  });
  const unknownExit = (why: string): CliExit => ({
    code: null,
    signal: null,
    stderrTail: why,
    unknown: true,
  });
  stopListening = keeper.onClose(() =>
    resolveExit(unknownExit("the keeper went away; how the CLI ended is unknown")),
  );
  keeper.attach(id, 0, {
    line: (offset, text, next) => {
      if (!detached) hooks.onLine(text, { offset, next, replayed: offset < through });
    },
    overflow: () => {
      lineTooLong = { limitBytes: maxLineBytes };
    },
    exited: (exit) =>
      resolveExit({
        code: exit.code,
        signal: exit.signal as NodeJS.Signals | null,
        stderrTail: exit.stderrTail,
        ...(lineTooLong !== undefined && { lineTooLong }),
      }),
  });
  void exited.then(() => stopListening());
  return {
    identity,
    exited,
    async stop(graceMs = 2_000) {
      keeper.stop(id, graceMs);
      return exited;
    },
    detach() {
      detached = true;
      resolveExit(unknownExit("left running to its keeper"));
    },
    release() {
      keeper.release(id);
    },
  };
}
