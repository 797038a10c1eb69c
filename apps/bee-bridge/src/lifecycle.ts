import { describeError, type Logger } from "@bridgeworks/runtime";

export type ShutdownReason = "SIGINT" | "SIGTERM" | "SIGHUP" | "stdin-end" | "parent-died";

export interface LifecycleOptions {
  log: Logger;
  /** Synchronous, first thing on every path out: removing the run file must not wait for anything. */
  releaseSync: () => void;
  /** The rest of the cleanup; shutdown does not wait for it beyond `graceMs`. */
  closeAsync: () => Promise<void>;
  exit: (code: number) => void;
  /** Claude Code sends SIGTERM 100 ms after SIGINT: the process is gone before that. */
  graceMs: number;
  /** The parent the process started under, and how to tell that it is gone. */
  parent: { initialPpid: number; currentPpid: () => number; claudePid?: number | undefined };
  isPidAlive: (pid: number) => boolean;
  parentPollMs: number;
}

export interface Lifecycle {
  /** Watches signals, stdin and the parent. */
  start(process: NodeJS.Process): void;
  shutdown(reason: ShutdownReason): void;
}

/** One way out of the bridge whatever ends it; releasing is idempotent and never waits. */
export function createLifecycle(options: LifecycleOptions): Lifecycle {
  let shuttingDown = false;
  let parentPoll: NodeJS.Timeout | undefined;

  function shutdown(reason: ShutdownReason): void {
    if (shuttingDown) return;
    shuttingDown = true;
    if (parentPoll) clearInterval(parentPoll);
    try {
      options.releaseSync();
    } catch (error) {
      options.log.error("could not release the run file", { error: describeError(error) });
    }
    options.log.info("bridge stopping", { reason });
    const forced = setTimeout(() => options.exit(0), options.graceMs);
    options
      .closeAsync()
      .catch((error: unknown) => options.log.warn("cleanup failed", { error: describeError(error) }))
      .finally(() => {
        clearTimeout(forced);
        options.exit(0);
      });
  }

  function parentGone(): boolean {
    const { initialPpid, currentPpid, claudePid } = options.parent;
    if (currentPpid() !== initialPpid) return true;
    return claudePid !== undefined && !options.isPidAlive(claudePid);
  }

  return {
    shutdown,
    start(target) {
      for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
        target.on(signal, () => shutdown(signal));
      }
      target.stdin.on("end", () => shutdown("stdin-end"));
      target.stdin.on("close", () => shutdown("stdin-end"));
      parentPoll = setInterval(() => {
        if (parentGone()) shutdown("parent-died");
      }, options.parentPollMs);
      parentPoll.unref();
    },
  };
}
