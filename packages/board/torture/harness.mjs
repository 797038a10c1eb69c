// The board's crash torture, against dist/ (torture.mjs runs it; test/torture.test.ts runs a sample).
// Each trial starts a claimer process (claimer.mjs) waiting on the board, posts it one action, and at a
// random point between its wake-up and its complete SIGKILLs it (or SIGSTOPs it: a zombie that comes
// back). Then, as a rescuer, it waits on the board for the action to be claimable again, claims it and
// completes it, and tries the dead holder's complete under its old fencing token. It checks: no action
// lost, none completed twice, each claimable again within TTL + 1 s of its holder's death, every zombie
// complete refused stale_fence. On PostgreSQL it also restarts the server in the middle of chosen trials.
import { spawn } from "node:child_process";
import { loadavg } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { openBoard } from "../dist/index.js";

const claimerScript = fileURLToPath(new URL("./claimer.mjs", import.meta.url));
const clusterScript = fileURLToPath(new URL("../../../scripts/postgres-test-cluster.mjs", import.meta.url));

/**
 * How a zombie is made. On PostgreSQL SIGSTOP: a client frozen anywhere holds nothing, each write
 * being one statement the server runs whole. On SQLite the claimer freezes itself between steps
 * (SIGUSR2, thawed by SIGUSR1): a process stopped inside a write transaction holds the file's write
 * lock, which stops every writer on the machine until it goes on or dies (see the README).
 */
const freezeSignals = {
  postgres: { freeze: "SIGSTOP", thaw: "SIGCONT" },
  sqlite: { freeze: "SIGUSR2", thaw: "SIGUSR1" },
};

/** Where in a claimer's life the torture strikes: after the step's line, a random moment later. */
export const killPoints = ["woke", "claimed", "completing"];

/** A small seeded generator (mulberry32), so a run can be repeated. */
export function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Repeats a call while the board is busy (a held lock, a restarting server), up to a minute. */
async function whileBusy(call) {
  const deadline = Date.now() + 60_000;
  for (let pause = 20; ; pause = Math.min(pause * 2, 500)) {
    try {
      return await call();
    } catch (error) {
      if (error?.code !== "busy" || Date.now() > deadline) throw error;
      await sleep(pause);
    }
  }
}

/** Starts a throwaway cluster of its own (restarting the shared one would disturb other tests). */
export async function startCluster() {
  const started = await runScript(["start"]);
  const cluster = JSON.parse(started);
  return {
    url: cluster.url,
    restart: () => runScript(["restart", cluster.dir]),
    stop: () => runScript(["stop", cluster.dir]),
  };
}

function runScript(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [clusterScript, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`postgres-test-cluster ${args[0]} failed: ${err}`)),
    );
  });
}

/** A claimer process and the steps it reported. */
function startClaimer(location, name, workMs, renewMs) {
  const child = spawn(process.execPath, [claimerScript], {
    env: {
      ...process.env,
      BEE_BOARD: location,
      TORTURE_AGENT: name,
      TORTURE_WORK_MS: String(workMs),
      TORTURE_RENEW_MS: String(renewMs),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const events = [];
  const waiters = [];
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  createInterface({ input: child.stdout }).on("line", (line) => {
    const event = JSON.parse(line);
    events.push(event);
    for (const waiter of [...waiters]) waiter();
  });
  let gone = false;
  void exited.then(() => {
    gone = true;
    for (const waiter of [...waiters]) waiter();
  });
  return {
    name,
    child,
    events,
    exited,
    stderr: () => stderr,
    last: (name) => events.findLast((event) => event.event === name),
    /** Resolves with the first event named in `names`, or undefined once the process is gone. */
    until(names) {
      return new Promise((resolve) => {
        const check = () => {
          const found = events.find((event) => names.includes(event.event));
          if (found !== undefined || gone) {
            waiters.splice(waiters.indexOf(check), 1);
            resolve(found);
          }
        };
        waiters.push(check);
        check();
      });
    },
    signal(name) {
      try {
        process.kill(child.pid, name);
      } catch (error) {
        if (error.code !== "ESRCH") throw error;
      }
    },
  };
}

/**
 * Runs `trials` trials against the board at `location` (`concurrency` at a time) and returns the
 * summary; `restart` (PostgreSQL) restarts the server, which trials chosen every `restartEvery` do
 * while their claimer holds its action.
 */
export async function runTorture(options) {
  const {
    store,
    location,
    trials,
    seed = 1,
    ttlMs = 1000,
    concurrency = 8,
    restart,
    restartEvery = 0,
  } = options;
  // The goal: claimable again within TTL + 1 s of the holder's death. A test on a loaded machine may widen it.
  const reclaimBoundMs = options.reclaimBoundMs ?? ttlMs + 1000;
  const random = seededRandom(seed);
  const board = await openBoard(location, { recheckIntervalMs: 600_000 });
  const summary = {
    store,
    trials,
    seed,
    ttlMs,
    concurrency,
    startedAt: new Date().toISOString(),
    loadAverage: { start: loadavg()[0] },
    kills: { SIGKILL: 0, [freezeSignals[store].freeze]: 0 },
    points: Object.fromEntries(killPoints.map((point) => [point, 0])),
    outcomes: { completedBeforeDeath: 0, diedBeforeClaim: 0, reclaimedAfterDeath: 0, lostLeaseAlive: 0 },
    restarts: [],
    reclaimLatencyMs: { count: 0, max: 0, p50: 0, p99: 0, bound: 0, overBound: 0, restartOverlap: 0 },
    zombieCompletes: { attempted: 0, refusedStaleFence: 0, accepted: 0 },
    actions: { posted: 0, done: 0, lost: 0, completedTwice: 0 },
    violations: [],
  };
  const latencies = [];
  const restartWindows = [];
  const violation = (trial, what, detail = {}) => summary.violations.push({ trial, what, ...detail });

  try {
    await whileBusy(() => board.configure({ leaseTtlMs: ttlMs }));
    const posted = [];
    const plans = Array.from({ length: trials }, (_, index) => ({
      index,
      point: killPoints[Math.floor(random() * killPoints.length)],
      workMs: 50 + Math.floor(random() * 250),
      offsetFraction: random(),
      zombie: random() < 0.25,
      zombieFirst: random() < 0.5,
      restart:
        restart !== undefined && restartEvery > 0 && index % restartEvery === Math.floor(restartEvery / 2),
    }));

    const runTrial = async (plan) => {
      const name = `claimer-${seed}-${plan.index}`;
      const claimer = startClaimer(location, name, plan.workMs, Math.max(50, Math.floor(ttlMs / 3)));
      try {
        if ((await claimer.until(["waiting"])) === undefined) {
          violation(plan.index, "claimer did not start", { stderr: claimer.stderr() });
          return;
        }
        const action = await whileBusy(() =>
          board.post({ kind: "torture", to: name, from: "human", body: `trial ${plan.index}` }),
        );
        posted.push(action.id);
        if (plan.restart) {
          await claimer.until(["claimed", "taken", "completed", "complete-refused"]);
          const startedAt = Date.now();
          await restart();
          restartWindows.push([startedAt, Date.now()]);
          summary.restarts.push({ trial: plan.index, ms: Date.now() - startedAt });
        }
        const reached = await claimer.until([plan.point, "completed", "complete-refused", "taken"]);
        // Right after the wake-up (during the claim), anywhere in the work, or racing the complete.
        const offsetMs = { woke: 5, claimed: plan.workMs, completing: 0 }[plan.point] * plan.offsetFraction;
        if (reached?.event === plan.point) await sleep(offsetMs);
        const deathAt = Date.now();
        const signal = plan.zombie ? freezeSignals[store].freeze : "SIGKILL";
        claimer.signal(signal);
        summary.kills[signal] += 1;
        summary.points[plan.point] += 1;
        if (signal === "SIGKILL") await claimer.exited;
        await judgeTrial({ plan, claimer, action, deathAt });
      } finally {
        claimer.signal("SIGKILL");
        await claimer.exited;
      }
    };

    /**
     * Waits, as any agent would, until the action is claimable again (woken by the board's own timer
     * when the holder's lease lapses) or done (a complete the server finished after its client died).
     */
    const awaitRelease = async (rescuer, actionId, deadline) => {
      let cursor = (await whileBusy(() => board.list({ limit: 1 }))).cursor;
      for (;;) {
        const record = await whileBusy(() => board.get(actionId));
        if (record.state === "open" || record.state === "done") return record.state;
        if (Date.now() >= deadline) return record.state;
        const page = await board
          .waitForClaimable(rescuer.identity, cursor, {
            timeoutMs: Math.min(2000, Math.max(1, deadline - Date.now())),
          })
          .catch((error) => (error?.code === "busy" ? { records: [], cursor } : Promise.reject(error)));
        cursor = page.cursor;
        if (page.records.some((each) => each.id === actionId)) return "open";
      }
    };

    const judgeTrial = async ({ plan, claimer, action, deathAt }) => {
      let completions = claimer.events.filter((event) => event.event === "completed").length;
      if (claimer.last("lease-lost") !== undefined && claimer.last("completed") === undefined) {
        summary.outcomes.lostLeaseAlive += 1;
      }
      const identity = claimer.events.find((event) => event.event === "waiting")?.identity;
      const held = claimer.last("claimed");
      // The agent back after a restart: a new identity of the same name picks up its work.
      const rescuer = await whileBusy(() => board.register(claimer.name, { lease: false }));
      let zombieTried = false;
      const zombie = async () => {
        if (held === undefined || zombieTried) return;
        zombieTried = true;
        summary.zombieCompletes.attempted += 1;
        try {
          await whileBusy(() => board.complete(identity, action.id, "zombie", { fence: held.fence }));
          summary.zombieCompletes.accepted += 1;
          completions += 1;
          violation(plan.index, "a zombie complete was accepted");
        } catch (error) {
          if (error?.code === "stale_fence") summary.zombieCompletes.refusedStaleFence += 1;
          else
            violation(plan.index, "a zombie complete was refused with the wrong code", { code: error?.code });
        }
      };
      let rescued;
      for (;;) {
        const record = await whileBusy(() => board.get(action.id));
        if (record.state === "done") break;
        if (record.state === "claimed" && record.claimedBy !== rescuer.identity) {
          const state = await awaitRelease(rescuer, action.id, deathAt + ttlMs + 10_000);
          if (state === "done") continue;
          if (state !== "open") {
            violation(plan.index, "never claimable again", { state });
            return;
          }
          const latency = Date.now() - deathAt;
          const overlap = restartWindows.some(
            ([from, to]) => deathAt <= to && from <= deathAt + ttlMs + 1000,
          );
          if (overlap) summary.reclaimLatencyMs.restartOverlap += 1;
          else {
            latencies.push(latency);
            if (latency > reclaimBoundMs)
              violation(plan.index, "claimable again too late", { latency, reclaimBoundMs });
          }
          // The holder's lease has lapsed: from now on its complete is a zombie's, before or after the new claim.
          if (plan.zombieFirst) await zombie();
        }
        const claimed = await whileBusy(() => board.claim(rescuer.identity, action.id));
        if (claimed.outcome !== "claimed") continue;
        rescued = claimed.record;
        break;
      }
      if (rescued === undefined) {
        const record = await whileBusy(() => board.get(action.id));
        summary.outcomes.completedBeforeDeath += 1;
        if (record.claimedBy !== identity)
          violation(plan.index, "done by someone other than its only claimer");
        if (completions === 0) completions = 1;
      } else {
        if (held === undefined) summary.outcomes.diedBeforeClaim += 1;
        else summary.outcomes.reclaimedAfterDeath += 1;
        const expectedFence = held === undefined ? 1 : held.fence + 1;
        if (rescued.fence < expectedFence) {
          violation(plan.index, "a new claim did not take a new fencing token", { fence: rescued.fence });
        }
        await zombie();
        if (plan.zombie) {
          // The zombie wakes: its own complete must be refused.
          claimer.signal(freezeSignals[store].thaw);
          const last = await claimer.until(["completed", "complete-refused", "taken"]);
          if (last?.event === "completed") {
            completions += 1;
            violation(plan.index, "a resumed zombie completed");
          } else if (last?.event === "complete-refused") {
            summary.zombieCompletes.attempted += 1;
            if (last.code === "stale_fence") summary.zombieCompletes.refusedStaleFence += 1;
            else
              violation(plan.index, "a resumed zombie was refused with the wrong code", { code: last.code });
          }
        }
        const done = await whileBusy(() =>
          board.complete(rescuer.identity, action.id, "rescued", { fence: rescued.fence }),
        );
        if (done.outcome === "completed") completions += 1;
      }
      if (completions !== 1) {
        if (completions > 1) summary.actions.completedTwice += 1;
        violation(plan.index, `completed ${completions} times`);
      }
    };

    let next = 0;
    const workers = Array.from({ length: Math.min(concurrency, trials) }, async () => {
      while (next < plans.length) await runTrial(plans[next++]);
    });
    await Promise.all(workers);

    summary.actions.posted = posted.length;
    for (const id of posted) {
      const record = await whileBusy(() => board.get(id));
      if (record.state === "done") summary.actions.done += 1;
      else {
        summary.actions.lost += 1;
        violation(null, "an action was lost", { id, state: record.state });
      }
    }
  } finally {
    await board.close();
  }
  latencies.sort((a, b) => a - b);
  const at = (fraction) =>
    latencies[Math.min(latencies.length - 1, Math.floor(fraction * latencies.length))] ?? 0;
  summary.reclaimLatencyMs = {
    ...summary.reclaimLatencyMs,
    count: latencies.length,
    max: latencies.at(-1) ?? 0,
    p50: at(0.5),
    p99: at(0.99),
    bound: reclaimBoundMs,
    overBound: latencies.filter((latency) => latency > reclaimBoundMs).length,
  };
  summary.loadAverage.end = loadavg()[0];
  summary.finishedAt = new Date().toISOString();
  return summary;
}
