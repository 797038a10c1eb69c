import { type BackendEvent, effectsOfEvent, type TurnEffect, type TurnError } from "@bridgeworks/protocol";
import type { PreparedTurn, TurnOutcome } from "./backend-adapter.js";
import {
  type CliExit,
  type CliProcessDeps,
  type LinePosition,
  type RunningCli,
  startCliProcess,
} from "./cli-process.js";
import type { ProcessIdentity } from "./process-identity.js";
import { TurnErrorCode } from "./turn-error-code.js";

export interface RunTurnHooks {
  /**
   * The CLI's pid and start time, before any of its output is read: journal them for fencing. If it
   * throws, the process is killed and `runTurn` throws that error.
   */
  onSpawned?(identity: ProcessIdentity): void;
  /**
   * Every normalized event, in stream order, synchronously: the next line is not translated until
   * this returns, so an event journaled here is journaled before anything that follows it. If it
   * throws, the CLI is stopped and `result` rejects with that error. A kept CLI's events come with
   * `through`, where the next line of its stdout starts (journal it with them: an adopted CLI is read
   * again from there); an adopted CLI's lines journaled before are translated again, not handed on.
   */
  onEvent(event: BackendEvent, through?: number): void;
}

export interface TurnResult {
  outcome: TurnOutcome;
  exit: CliExit;
  /** What the turn's events proved, in the order first seen (assistant_text, tool_started). */
  effects: TurnEffect[];
  /** The conversation a later turn continues: known before spawn, or from `backend.started`. */
  conversationId: string | undefined;
}

export interface RunningTurn {
  identity: ProcessIdentity;
  result: Promise<TurnResult>;
  /** Ends the CLI's process group (TERM, then KILL after `graceMs`); the turn is `cancelled`. */
  stop(graceMs?: number): Promise<TurnResult>;
  /** A kept CLI: stop reading it, leaving it running to its keeper (`RunningCli.detach`). */
  detach?(): void;
  /** A kept CLI: the keeper forgets it (`RunningCli.release`), once its end is journaled. */
  release?(): void;
}

/**
 * Runs one prepared turn: spawns its CLI, feeds each stdout line to the adapter's translator, hands
 * the events to `onEvent`, and classifies the exit. A translator `abort` (e.g. the MCP bridge is
 * unusable) stops the CLI and fails the turn with that error. Rejects if the CLI cannot be started.
 */
export async function runTurn(
  prepared: PreparedTurn,
  hooks: RunTurnHooks,
  deps: CliProcessDeps = {},
): Promise<RunningTurn> {
  const { translator } = prepared;
  const effects: TurnEffect[] = [];
  let conversationId = prepared.conversationId;
  let stopRequested = false;
  let aborted: TurnError | undefined;
  let hookError: { error: unknown } | undefined;
  let cli: RunningCli | undefined;

  // Output is read in later ticks than the one that resolves the start, so `cli` is set by the time a
  // line can ask for a stop.
  const stopCli = () => void cli?.stop();

  const onLine = (line: string, position?: LinePosition) => {
    if (hookError !== undefined || aborted !== undefined) return;
    // Runs inside the stdout handler: anything thrown here would otherwise take the daemon down.
    try {
      const translated = translator.translate(line);
      for (const event of translated.events) {
        if (position === undefined) hooks.onEvent(event);
        else if (!position.replayed) hooks.onEvent(event, position.next);
        if (event.type === "backend.started") conversationId = event.conversationId;
        for (const effect of effectsOfEvent(event)) if (!effects.includes(effect)) effects.push(effect);
      }
      if (translated.abort !== undefined) {
        aborted = translated.abort;
        stopCli();
      }
    } catch (error) {
      hookError = { error };
      stopCli();
    }
  };

  cli = await startCliProcess(
    prepared.launch,
    { onSpawned: (identity) => hooks.onSpawned?.(identity), onLine },
    deps,
  );
  const running = cli;

  const result = running.exited.then((exit): TurnResult => {
    if (hookError !== undefined) throw hookError.error;
    const outcome: TurnOutcome =
      aborted !== undefined
        ? { phase: "failed", error: aborted }
        : exit.lineTooLong !== undefined
          ? {
              phase: "failed",
              error: {
                code: TurnErrorCode.outputTooLarge,
                message:
                  `${prepared.launch.command} wrote a line of output longer than ` +
                  `${exit.lineTooLong.limitBytes} bytes; the turn was stopped`,
              },
            }
          : translator.classify(exit, { stopRequested });
    return { outcome, exit, effects: [...effects], conversationId };
  });

  return {
    identity: running.identity,
    result,
    async stop(graceMs) {
      stopRequested = true;
      await running.stop(graceMs);
      return result;
    },
    ...(running.detach && { detach: () => running.detach?.() }),
    ...(running.release && { release: () => running.release?.() }),
  };
}
