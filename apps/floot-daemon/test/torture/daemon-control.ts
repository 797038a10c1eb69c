import type { TurnRecord } from "@bridgeworks/protocol";
import type { DaemonFaults, FlootWorld } from "../daemon-harness.js";

export const terminalPhases: ReadonlySet<string> = new Set([
  "completed",
  "failed",
  "cancelled",
  "interrupted",
]);

/**
 * One API call, tried again while the daemon process still runs: the daemon listens on the same port
 * after each restart, so a client's pooled keep-alive connection to the killed one fails once
 * (`fetch failed`). A daemon that has exited is no such case: its state goes into the error.
 */
export async function api<T>(world: FlootWorld, call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      const child = world.daemon?.process.child;
      const running = child !== undefined && child.exitCode === null && child.signalCode === null;
      if (!running || attempt >= 5 || !String(error).includes("not reachable")) {
        throw new Error(`${error instanceof Error ? error.message : String(error)}${daemonState(world)}`);
      }
      await sleep(250 * attempt);
    }
  }
}

/** Whether the current daemon still runs, and if not how it ended and what it last wrote. */
export function daemonState(world: FlootWorld): string {
  const daemon = world.daemon;
  if (!daemon) return " (no daemon was running)";
  const { exitCode, signalCode } = daemon.process.child;
  const ended = exitCode !== null || signalCode !== null;
  const tail = daemon.process.stderr().slice(-1_500);
  return ended
    ? ` (the daemon ${daemon.process.pid} had exited: code ${exitCode}, signal ${signalCode}; its stderr ends: ${tail})`
    : ` (the daemon ${daemon.process.pid} was still running; its stderr ends: ${tail.slice(-300)})`;
}

/** A trial that threw: its error as a violation (with the daemon's state), and no daemon left running. */
export async function abandonTrial(
  world: FlootWorld,
  error: unknown,
  violate: (invariant: "trial_error", detail: string) => void,
): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  violate("trial_error", message.includes("(the daemon ") ? message : `${message}${daemonState(world)}`);
  if (world.daemon) await world.killDaemon().catch(() => {});
  world.daemon = undefined;
}

/**
 * Resolves once the turn has ended, read beside the daemon; never while `watching.active` is false
 * (it then stays pending quietly). Rejects after `timeoutMs`.
 */
export async function waitForTurnEnd(
  world: FlootWorld,
  turnId: string,
  watching: { active: boolean },
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (watching.active) {
    const row = world.readTurnRow(turnId);
    if (row && terminalPhases.has(row.phase)) return;
    if (Date.now() > deadline) throw new Error(`turn ${turnId} neither ended nor met its kill point`);
    await sleep(50);
  }
  return new Promise(() => {});
}

/** Polls the session's turns until every one is terminal or `timeoutMs` passed; returns the last read. */
export async function settle(world: FlootWorld, sessionId: string, timeoutMs: number): Promise<TurnRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const turns = await api(world, () => world.turns(sessionId));
    if (turns.every((turn) => terminalPhases.has(turn.phase)) || Date.now() > deadline) return turns;
    await sleep(250);
  }
}

/** SIGTERM to the running daemon, if any; resolves once it exited. */
export async function stopGracefully(world: FlootWorld): Promise<void> {
  const daemon = world.daemon;
  if (!daemon) return;
  process.kill(daemon.process.pid, "SIGTERM");
  await daemon.process.exited;
  world.daemon = undefined;
}

/** Starts a daemon that may be killed by a fault before it is ready. */
export function startDaemonOrExit(
  world: FlootWorld,
  env: Record<string, string>,
  faults: DaemonFaults,
): Promise<"ready" | "exited"> {
  return world.startDaemon(env, faults).then(
    () => "ready" as const,
    () => "exited" as const,
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
