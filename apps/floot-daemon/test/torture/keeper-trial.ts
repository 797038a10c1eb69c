import { statSync } from "node:fs";
import { join } from "node:path";
import type { TurnEventEnvelope } from "@bridgeworks/protocol";
import { isProcessAlive, waitUntil } from "@bridgeworks/test-harness";
import Database from "better-sqlite3";
import { keeperPlaces } from "../../src/daemon/keeper-link.js";
import { journalFileName } from "../../src/state-dir.js";
import type { FlootWorld } from "../daemon-harness.js";
import {
  abandonTrial,
  api,
  settle,
  sleep,
  startDaemonOrExit,
  stopGracefully,
  terminalPhases,
} from "./daemon-control.js";
import { readJournal } from "./journal-view.js";
import {
  captureSpools,
  checkKeeperGone,
  checkNoNeedlessInterruption,
  checkSpool,
  turnsAliveAtRestart,
} from "./keeper-checks.js";
import { describePlan, firstFaults, type TrialPlan } from "./points.js";
import { tortureMarker } from "./script.js";
import { checkAfterKill, checkAfterSettle, checkCliSessionsGone, type Violation } from "./trial-checks.js";
import type { TrialRecord } from "./trial-record.js";

/** The keeper as a user has it (the default); the recovery mode sets `FLOOT_KEEPER=off`. */
const keeperOn: Record<string, string> = {};

/**
 * One keeper-mode trial: the turn's CLI runs under the keeper, the daemon is stopped as the plan says,
 * restarted, and the turn must go on. Beside the recovery mode's invariants: no turn interrupted whose
 * CLI ran under a live keeper at the restart, every spooled line journaled once and in order, no
 * keeper and no spool left once the turns ended and the daemon stopped.
 */
export async function runKeeperTrial(
  world: FlootWorld,
  plan: TrialPlan,
  settleTimeoutMs: number,
): Promise<TrialRecord> {
  const startedAt = Date.now();
  const firstDaemon = world.daemonsSpawned.length;
  const violations: Violation[] = [];
  const violate = (invariant: Violation["invariant"], detail: string) =>
    violations.push({ trial: plan.trial, point: plan.point, invariant, detail });
  const record: TrialRecord = {
    trial: plan.trial,
    point: plan.point,
    plan: describePlan(plan),
    fired: false,
    phases: [],
    effectLines: { call1: 0, call2: 0 },
    violations,
    ms: 0,
    steps: {},
    keeper: { aliveAtRestart: 0, needless: 0, spoolsChecked: 0 },
  };
  let stepStart = Date.now();
  const step = (name: string) => {
    record.steps[name] = Date.now() - stepStart;
    stepStart = Date.now();
  };
  const spoolDir = keeperPlaces(world.stateRuntimeDir).spoolDir;
  const capture = captureSpools(spoolDir, join(world.env.root, "spools", `trial-${plan.trial}`));
  const keepers = new Set<number>();
  const noteKeeper = async () => {
    const pid = await world.keeperPid();
    if (pid !== undefined) keepers.add(pid);
    return pid !== undefined;
  };
  try {
    await world.startDaemon(keeperOn, firstFaults(plan));
    await noteKeeper();
    step("start");
    const session = await api(world, () => world.createSession());
    const turn = await api(world, () => world.send(session.id, `${tortureMarker} trial ${plan.trial}`));
    const seen: TurnEventEnvelope[] = [];
    void world.client.follow(turn.id, 0, (envelope) => seen.push(envelope)).catch(() => {});

    const stop = await stopAsPlanned(world, plan, turn.id);
    record.fired = stop.fired;
    if (stop.spoolAhead !== undefined) record.keeper!.spoolAhead = stop.spoolAhead;
    // The point was never reached: the turn ended first. Stop the daemon the ordinary way.
    if (world.daemon) await stopGracefully(world);
    step("turn");

    let crashed = readJournal(world.stateDir, session.id);
    checkAfterKill(crashed, seen, violate);
    if (plan.point === "adoption" && stop.fired) {
      record.keeper!.adoptionKilled = await killWhileAdopting(world, plan, turn.id);
      crashed = readJournal(world.stateDir, session.id);
      for (const detail of crashed.problems)
        violate("journal_inconsistent", `after the adoption kill: ${detail}`);
    }
    const alive = turnsAliveAtRestart(crashed, await noteKeeper());
    record.keeper!.aliveAtRestart = alive.size;

    await world.startDaemon(keeperOn);
    await noteKeeper();
    step("restart");
    const turns = await settle(world, session.id, settleTimeoutMs);
    step("settle");
    record.phases = turns.map((entry) => entry.phase);
    for (const entry of turns) {
      if (!terminalPhases.has(entry.phase)) violate("turn_stuck", `turn ${entry.id} is still ${entry.phase}`);
    }
    record.keeper!.needless = checkNoNeedlessInterruption(alive, turns, violate);
    await stopGracefully(world);
    step("stop");

    const final = readJournal(world.stateDir, session.id);
    record.effectLines = checkAfterSettle(session.workspace, crashed, final, turns, violate);
    await checkCliSessionsGone(turns, violate);
    const spools = capture.captured();
    for (const entry of final.turns) {
      const spool = spools.get(entry.id);
      if (spool === undefined) continue;
      checkSpool(world.backend, entry, spool, final.events.get(entry.id) ?? [], violate);
      record.keeper!.spoolsChecked += 1;
    }
    // The last daemon stopped with nothing kept: its keeper ends, a moment later.
    await waitUntil(() => [...keepers].every((pid) => !isProcessAlive(pid)), 10_000, "keepers gone").catch(
      () => {},
    );
    checkKeeperGone(keepers, spoolDir, final.turns, violate);
    step("final-check");
  } catch (error) {
    await abandonTrial(world, error, violate);
  } finally {
    capture.stop();
  }
  record.ms = Date.now() - startedAt;
  if (violations.length > 0)
    record.daemonLogs = world.daemonsSpawned.slice(firstDaemon).map((daemon) => tail(daemon.stderr(), 40));
  return record;
}

function tail(text: string, lines: number): string {
  return text.split("\n").slice(-lines).join("\n");
}

/** Stops the first daemon as the plan says; `fired` when the turn was still unfinished at that stop. */
async function stopAsPlanned(
  world: FlootWorld,
  plan: TrialPlan,
  turnId: string,
): Promise<{ fired: boolean; spoolAhead?: boolean }> {
  const daemon = world.daemon!;
  if (plan.point === "mid-spool") return killMidSpool(world, turnId);
  const started = await waitForPhase(world, turnId, (phase) => phase !== "accepted" && phase !== "spawning");
  if (!started) return { fired: false };
  const deadline = Date.now() + plan.delayMs;
  while (Date.now() < deadline && !ended(world, turnId)) await sleep(Math.min(50, deadline - Date.now()));
  if (ended(world, turnId)) return { fired: false };
  const signal = plan.point === "sigterm" || (plan.point === "adoption" && plan.firstStop === "SIGTERM");
  if (signal) {
    process.kill(daemon.process.pid, "SIGTERM");
    await daemon.process.exited;
    world.daemon = undefined;
  } else {
    await world.killDaemon();
    if (plan.point === "keeper") await world.killKeeper({ clis: plan.keeperClis });
  }
  return { fired: true };
}

/**
 * The daemon is held at one of the turn's events (the fault preload blocks its thread); the CLI goes
 * on writing into the keeper's spool. SIGKILL once the spool holds more than the journal's
 * `stdout_through` (or after 5 s of waiting for it).
 */
async function killMidSpool(
  world: FlootWorld,
  turnId: string,
): Promise<{ fired: boolean; spoolAhead?: boolean }> {
  const daemon = world.daemon!;
  const held = () => world.faultHits().some((hit) => hit.pid === daemon.process.pid);
  while (!held()) {
    if (ended(world, turnId)) return { fired: false };
    await sleep(20);
  }
  const spool = join(keeperPlaces(world.stateRuntimeDir).spoolDir, `${turnId}.out`);
  const ahead = () => spoolSize(spool) > (stdoutThrough(world, turnId) ?? 0);
  const deadline = Date.now() + 5_000;
  while (!ahead() && Date.now() < deadline) await sleep(20);
  const spoolAhead = ahead();
  await world.killDaemon();
  return { fired: true, spoolAhead };
}

/**
 * The turn's CLI ran on under the keeper through the first stop: the restarted daemon is SIGKILLed
 * at the plan's adoption point. Resolves true when it died there, false when it got through (the
 * turn ended first, or nothing was left to adopt): it is then stopped the ordinary way.
 */
async function killWhileAdopting(world: FlootWorld, plan: TrialPlan, turnId: string): Promise<boolean> {
  const faults = { [plan.adoptionPoint]: { action: "kill" as const } };
  if ((await startDaemonOrExit(world, keeperOn, faults)) === "exited") return true;
  const daemon = world.daemon!;
  let exited = false;
  void daemon.process.exited.then(() => {
    exited = true;
  });
  while (!exited && !ended(world, turnId)) await sleep(20);
  if (exited) {
    world.daemon = undefined;
    return true;
  }
  await stopGracefully(world);
  return false;
}

function ended(world: FlootWorld, turnId: string): boolean {
  const row = world.readTurnRow(turnId);
  return row !== undefined && terminalPhases.has(row.phase);
}

async function waitForPhase(
  world: FlootWorld,
  turnId: string,
  reached: (phase: string) => boolean,
  timeoutMs = 60_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = world.readTurnRow(turnId);
    if (row !== undefined && reached(row.phase)) return !terminalPhases.has(row.phase);
    if (Date.now() > deadline) throw new Error(`turn ${turnId} never started running`);
    await sleep(20);
  }
}

function spoolSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function stdoutThrough(world: FlootWorld, turnId: string): number | undefined {
  const db = new Database(join(world.stateDir, journalFileName), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare("SELECT stdout_through AS through FROM turns WHERE id = ?").get(turnId) as
      | { through: number | null }
      | undefined;
    return row?.through ?? undefined;
  } finally {
    db.close();
  }
}
