// The CLIs' priority under CPU contention (issue 35): one short text turn of the real claude against the
// model double, run by the built daemon at `--cli-nice 10` and at `--cli-nice 0`, and `claude -p` run
// directly at nice 0 (the same-run baseline), first on the machine as it is, then beside a CPU hog of
// twice the cores. The three are interleaved turn by turn, so a change in the shared machine's load
// falls on each alike. Wall time: the turn's POST to its end seen by polling; for `claude -p`, spawn to exit.
import { spawn } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { startModelDouble } from "@bridgeworks/model-double";
import { createIsolatedEnvironment, resolveRealClient } from "@bridgeworks/test-harness";
import { api, children, ratio, round, sleep, startDaemon, stats, stopDaemon } from "./daemon-kit.mjs";

const prompt = "Reply with the word ok.";
const ended = ["completed", "failed", "cancelled", "interrupted"];

/** `count` busy-looping shells (a `stress -c` of our own), each in its own process group; `stop` kills them by pid. */
export function startHog(count) {
  const hogs = Array.from({ length: count }, () => {
    const child = spawn("/bin/sh", ["-c", "while :; do :; done"], { stdio: "ignore", detached: true });
    children.add(child);
    child.on("exit", () => children.delete(child));
    return child;
  });
  return {
    pids: hogs.map((child) => child.pid),
    async stop() {
      await Promise.all(
        hogs.map((child) => {
          if (child.exitCode !== null || child.signalCode !== null) return undefined;
          const exited = new Promise((resolve) => child.once("exit", resolve));
          process.kill(-child.pid, "SIGKILL");
          return exited;
        }),
      );
    },
  };
}

/** `claude -p` in the isolated environment, at the bench's own nice; resolves with its wall time (ms). */
function directTurn(world, claude, capMs) {
  const startedAt = performance.now();
  const child = spawn(claude.executable, ["-p", prompt], {
    cwd: world.workspace,
    env: world.env,
    stdio: ["ignore", "ignore", "ignore"],
    detached: true,
  });
  children.add(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => process.kill(-child.pid, "SIGKILL"), capMs);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      const ms = performance.now() - startedAt;
      if (signal === "SIGKILL") resolve({ ms, timedOut: true });
      else if (code !== 0) reject(new Error(`claude -p exited ${code ?? signal}`));
      else resolve({ ms, timedOut: false });
    });
  });
}

/** One turn in a new session of the daemon `call` talks to; resolves with its wall time (ms). */
async function daemonTurn(call, capMs) {
  const session = await call("POST", "/v1/sessions", { backend: "claude" });
  const startedAt = performance.now();
  const turn = await call("POST", `/v1/sessions/${session.id}/turns`, { prompt });
  for (;;) {
    const seen = await call("GET", `/v1/turns/${turn.id}`);
    const ms = performance.now() - startedAt;
    if (ended.includes(seen.phase)) {
      if (seen.phase !== "completed")
        throw new Error(`turn ${turn.id} ${seen.phase}: ${JSON.stringify(seen.error)}`);
      return { ms, timedOut: false };
    }
    if (ms > capMs) {
      await call("POST", `/v1/turns/${turn.id}/cancel`, {});
      return { ms, timedOut: true };
    }
    await sleep(20);
  }
}

/** The three modes, `turns` rounds each, interleaved; with their load averages (1 minute) as sampled. */
async function measure(runs, turns) {
  const samples = Object.fromEntries(Object.keys(runs).map((mode) => [mode, []]));
  const timedOut = Object.fromEntries(Object.keys(runs).map((mode) => [mode, 0]));
  const load = [loadavg()[0]];
  for (let i = 0; i < turns; i += 1) {
    for (const [mode, run] of Object.entries(runs)) {
      const result = await run();
      samples[mode].push(result.ms);
      if (result.timedOut) timedOut[mode] += 1;
    }
    load.push(loadavg()[0]);
  }
  const figures = Object.fromEntries(
    Object.entries(samples).map(([mode, values]) => [mode, { ...stats(values), timedOut: timedOut[mode] }]),
  );
  const baseline = figures.direct;
  return {
    loadAverage: { min: round(Math.min(...load)), max: round(Math.max(...load)), samples: load.map(round) },
    wallMs: figures,
    vsDirect: Object.fromEntries(
      Object.entries(figures)
        .filter(([mode]) => mode !== "direct")
        .map(([mode, f]) => [mode, { p50: ratio(f.p50, baseline.p50), p99: ratio(f.p99, baseline.p99) }]),
    ),
  };
}

export async function cliNiceUnderLoad(root, { turns = 8, capMs = 120_000 } = {}) {
  const claude = resolveRealClient("claude");
  const double = await startModelDouble({
    steps: [{ repeat: true, response: { events: [{ type: "text", text: "ok" }] } }],
  });
  const world = createIsolatedEnvironment({ modelUrl: double.url });
  const daemons = [];
  let hog;
  try {
    const env = { ...world.env, FLOOT_CLAUDE_COMMAND: claude.executable };
    const calls = {};
    for (const nice of ["0", "10"]) {
      const started = await startDaemon(root, join(root, `nice-${nice}`), {
        env,
        daemonArgs: ["--cli-nice", nice],
      });
      daemons.push(started.child);
      calls[nice] = api(started.file);
    }
    const runs = {
      direct: () => directTurn(world, claude, capMs),
      nice0: () => daemonTurn(calls["0"], capMs),
      nice10: () => daemonTurn(calls["10"], capMs),
    };
    // One untimed round first: the first start of claude reads its files from disk.
    for (const run of Object.values(runs)) await run();
    const withoutHog = await measure(runs, turns);
    const hogProcesses = 2 * availableParallelism();
    hog = startHog(hogProcesses);
    await sleep(5_000);
    const underHog = await measure(runs, turns);
    return {
      claude: claude.version,
      cores: availableParallelism(),
      turnsEach: turns,
      capMs,
      withoutHog,
      underHog: { hogProcesses, ...underHog },
      modelRequests: double.requests.length,
    };
  } finally {
    await hog?.stop();
    for (const child of daemons) await stopDaemon(child);
    await world.dispose();
    await double.close();
  }
}
