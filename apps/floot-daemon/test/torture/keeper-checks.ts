import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createClaudeTranslator, createCodexTranslator, isSameProcess } from "@bridgeworks/backend-adapters";
import { type Backend, BackendEvent, type TurnEventEnvelope, type TurnRecord } from "@bridgeworks/protocol";
import { isProcessAlive } from "@bridgeworks/test-harness";
import { terminalPhases } from "./daemon-control.js";
import type { JournalView } from "./journal-view.js";
import type { Violate } from "./trial-checks.js";

/**
 * Hard-links every spool the keeper opens into `into` as it appears: the keeper appends to the one
 * file and unlinks it once the turn's end is journaled, so the link ends up holding all the CLI wrote.
 */
export function captureSpools(
  spoolDir: string,
  into: string,
): { stop(): void; captured(): Map<string, string> } {
  mkdirSync(into, { recursive: true, mode: 0o700 });
  const captured = new Map<string, string>();
  const poll = () => {
    let names: string[];
    try {
      names = readdirSync(spoolDir);
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.endsWith(".out") || captured.has(name)) continue;
      const link = join(into, name);
      try {
        linkSync(join(spoolDir, name), link);
        captured.set(name, link);
      } catch {
        // Released between the listing and the link: a spool the trial's turns never had.
      }
    }
  };
  const timer = setInterval(poll, 5);
  return {
    stop: () => clearInterval(timer),
    captured: () => new Map([...captured].map(([name, link]) => [name.slice(0, -".out".length), link])),
  };
}

/** The backend events a spool's whole lines translate to, as the daemon's adapter reads them. */
export function spooledEvents(backend: Backend, spool: string): BackendEvent[] {
  const translator = backend === "claude" ? createClaudeTranslator() : createCodexTranslator();
  const lines = spool.split("\n").slice(0, -1);
  return lines.filter((line) => line.trim() !== "").flatMap((line) => translator.translate(line).events);
}

/** A turn's journaled backend events (those its CLI's lines made), without the daemon's own marks. */
export function journaledBackendEvents(envelopes: readonly TurnEventEnvelope[]): BackendEvent[] {
  return envelopes
    .map((envelope) => envelope.event)
    .filter((event): event is BackendEvent => BackendEvent.safeParse(event).success)
    .map((event) => {
      if (event.type !== "tool.started" || !("effectFree" in event)) return event;
      const { effectFree: _, ...rest } = event;
      return rest as BackendEvent;
    });
}

/**
 * Every spooled line journaled exactly once, in order: a turn that completed holds exactly the events
 * its spool translates to; any other turn (its CLI died with the keeper, or the daemon stopped its
 * stream) a prefix of them, beside the error or warning the daemon adds.
 */
export function checkSpool(
  backend: Backend,
  turn: TurnRecord,
  spoolPath: string,
  envelopes: readonly TurnEventEnvelope[],
  violate: Violate,
): void {
  const expected = spooledEvents(backend, readFileSync(spoolPath, "utf8"));
  const journaled = journaledBackendEvents(envelopes);
  const completed = turn.phase === "completed";
  const compared = completed ? journaled : trimDaemonTail(journaled, expected);
  const firstDifference = compared.findIndex(
    (event, index) => JSON.stringify(event) !== JSON.stringify(expected[index]),
  );
  if (firstDifference >= 0) {
    violate(
      "spool_not_journaled_once",
      `turn ${turn.id} (${turn.phase}): journaled backend event ${firstDifference} is ${JSON.stringify(
        compared[firstDifference],
      )}, the spool's is ${JSON.stringify(expected[firstDifference])} (${compared.length} journaled, ${expected.length} spooled)`,
    );
  } else if (compared.length > expected.length) {
    violate(
      "spool_not_journaled_once",
      `turn ${turn.id}: ${compared.length} events journaled, ${expected.length} spooled`,
    );
  } else if (completed && compared.length < expected.length) {
    violate(
      "spool_not_journaled_once",
      `turn ${turn.id} completed with ${compared.length} of its ${expected.length} spooled events journaled; the first missing: ${JSON.stringify(expected[compared.length])}`,
    );
  }
}

/**
 * Drops the trailing error and warning events the spool does not hold there: the daemon's own (a
 * stream it aborted, recovery's), not the CLI's.
 */
function trimDaemonTail(journaled: BackendEvent[], expected: readonly BackendEvent[]): BackendEvent[] {
  const trimmed = [...journaled];
  for (let last = trimmed.at(-1); last !== undefined; last = trimmed.at(-1)) {
    const spooled = expected[trimmed.length - 1];
    if (!["error", "warning"].includes(last.type) || JSON.stringify(spooled) === JSON.stringify(last)) break;
    trimmed.pop();
  }
  return trimmed;
}

/** Unfinished turns whose CLI still runs, under a keeper that still answers: the next daemon must adopt each. */
export function turnsAliveAtRestart(view: JournalView, keeperAnswers: boolean): Set<string> {
  if (!keeperAnswers) return new Set();
  return new Set(
    view.turns
      .filter(
        (turn) =>
          !terminalPhases.has(turn.phase) && turn.process !== undefined && isSameProcess(turn.process),
      )
      .map((turn) => turn.id),
  );
}

/** A turn whose CLI was alive at the restart ends `completed`, and no replay of it is made. */
export function checkNoNeedlessInterruption(
  alive: ReadonlySet<string>,
  turns: readonly TurnRecord[],
  violate: Violate,
): number {
  let needless = 0;
  for (const turnId of alive) {
    const turn = turns.find((entry) => entry.id === turnId);
    const replay = turns.find((entry) => entry.replayOf === turnId);
    if (turn?.phase === "completed" && replay === undefined) continue;
    needless += 1;
    violate(
      "needless_interruption",
      `turn ${turnId}'s CLI ran under the keeper at the restart, yet it ended ${turn?.phase ?? "missing"}${replay ? ` and was replayed as ${replay.id}` : ""}`,
    );
  }
  return needless;
}

/** Once the daemon stopped with every turn ended: no keeper of the trial runs, no spool is left. */
export function checkKeeperGone(
  keeperPids: ReadonlySet<number>,
  spoolDir: string,
  turns: readonly TurnRecord[],
  violate: Violate,
): void {
  for (const pid of keeperPids)
    if (isProcessAlive(pid))
      violate("keeper_left_behind", `keeper ${pid} still runs after the daemon stopped with nothing kept`);
  const left = existsSync(spoolDir) ? readdirSync(spoolDir) : [];
  for (const turn of turns)
    if (left.includes(`${turn.id}.out`))
      violate("keeper_left_behind", `the spool of ended turn ${turn.id} is still there`);
}
