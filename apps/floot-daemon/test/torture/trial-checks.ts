import { readFileSync } from "node:fs";
import { join } from "node:path";
import { findProcessesBySpawnMarker, isSameProcess, sessionMembers } from "@bridgeworks/backend-adapters";
import type { TurnEventEnvelope, TurnRecord } from "@bridgeworks/protocol";
import { countEffects, type JournalView } from "./journal-view.js";
import type { KillPoint } from "./points.js";
import { type CallLabel, callLabels, effectCommand, effectsFileName } from "./script.js";

export interface Violation {
  trial: number;
  point: KillPoint;
  invariant:
    | "effect_repeated"
    | "effect_unrecorded"
    | "replayed_with_effects"
    | "event_lost_or_reordered"
    | "turn_stuck"
    | "orphan_process"
    | "journal_inconsistent"
    | "needless_interruption"
    | "spool_not_journaled_once"
    | "keeper_left_behind"
    | "trial_error";
  detail: string;
}

export type Violate = (invariant: Violation["invariant"], detail: string) => void;

/** The journal as the kill left it: consistent, and holding every event a follower was shown. */
export function checkAfterKill(
  crashed: JournalView,
  seen: readonly TurnEventEnvelope[],
  violate: Violate,
): void {
  for (const detail of crashed.problems) violate("journal_inconsistent", `after the kill: ${detail}`);
  for (const envelope of seen) {
    const stored = crashed.events.get(envelope.turnId)?.[envelope.index];
    if (JSON.stringify(stored) !== JSON.stringify(envelope))
      violate(
        "event_lost_or_reordered",
        `event ${envelope.index} of ${envelope.turnId} shown before the kill is not stored as shown`,
      );
  }
}

/**
 * Once the turns settled and the daemon stopped: the journal consistent, everything stored at the
 * kill still there, each call's effect at most once and only when admitted, no turn with an effect
 * replayed, no process of the trial left. Returns how often each call's effect happened.
 */
export function checkAfterSettle(
  workspace: string,
  crashed: JournalView,
  final: JournalView,
  turns: readonly TurnRecord[],
  violate: Violate,
): Record<CallLabel, number> {
  for (const detail of final.problems) violate("journal_inconsistent", `after settling: ${detail}`);
  for (const [turnId, events] of crashed.events) {
    const now = final.events.get(turnId) ?? [];
    events.forEach((event, index) => {
      if (JSON.stringify(now[index]) !== JSON.stringify(event))
        violate(
          "event_lost_or_reordered",
          `event ${index} of ${turnId} changed or vanished after the restart`,
        );
    });
  }
  const effectLines = countEffects(join(workspace, effectsFileName));
  for (const label of callLabels) {
    if (effectLines[label] > 1) violate("effect_repeated", `${label} ran ${effectLines[label]} times`);
    if (effectLines[label] > 0 && !final.admitted.some((preview) => preview.includes(effectCommand(label))))
      violate("effect_unrecorded", `${label} ran with no gate record of it in the journal`);
  }
  for (const entry of turns) {
    if (entry.replayOf === undefined) continue;
    const original = turns.find((other) => other.id === entry.replayOf);
    if (original && original.effects.length > 0)
      violate(
        "replayed_with_effects",
        `turn ${original.id} had ${original.effects.join(",")} and was replayed`,
      );
  }
  const markers = turns.flatMap((entry) => entry.spawnMarker ?? []);
  const left = [...findProcessesBySpawnMarker(markers).values()].flat();
  for (const process of left)
    violate("orphan_process", `pid ${process.pid} still carries a marker of this trial`);
  for (const entry of turns) {
    if (entry.process && isSameProcess(entry.process))
      violate("orphan_process", `the CLI of turn ${entry.id} (pid ${entry.process.pid}) is still running`);
  }
  return effectLines;
}

/**
 * No process is left in the session of a trial's CLI (the keeper and the spawner start each CLI as a
 * session leader) once its turn ended: what a kill of the CLI's process group misses, e.g. a helper
 * that made a group of its own, and what carries no spawn marker (an environment it cleared). Allows
 * 5 s for such helpers to exit, then reports and SIGKILLs what is left (no trial leaves it running).
 */
export async function checkCliSessionsGone(turns: readonly TurnRecord[], violate: Violate): Promise<void> {
  const clis = turns.flatMap((entry) => (entry.process ? [{ turn: entry.id, ...entry.process }] : []));
  let left = sessionMembersOf(clis);
  const deadline = Date.now() + 5_000;
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = sessionMembersOf(clis);
  }
  for (const member of left) {
    violate(
      "orphan_process",
      `pid ${member.pid} (${member.command}) is still in the session of turn ${member.turn}'s CLI (pid ${member.session})`,
    );
    try {
      process.kill(member.pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
}

interface SessionMember {
  pid: number;
  session: number;
  turn: string;
  command: string;
}

function sessionMembersOf(
  clis: readonly { turn: string; pid: number; startTime: string }[],
): SessionMember[] {
  return clis.flatMap((cli) =>
    sessionMembers(cli).map((pid) => ({ pid, session: cli.pid, turn: cli.turn, command: commandOf(pid) })),
  );
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, 2).join(" ").slice(0, 120);
  } catch {
    return "gone";
  }
}
