// The keeper's rows of `pnpm bench` (issue 31): what a follower of a running turn sees across a
// planned restart, against restart-to-ready in the same run, and what reading the CLI through the
// keeper costs per event, against the direct pipe (FLOOT_KEEPER=off) in the same run.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  api,
  openStream,
  ratio,
  readDaemonFile,
  readSse,
  sleep,
  startDaemon,
  stats,
  stopDaemon,
  waitEnded,
} from "./daemon-kit.mjs";

/** Linux's USER_HZ: /proc's utime and stime are in these ticks. */
const ticksPerSecond = 100;

/**
 * A follower (SSE, reconnecting as the web UI does: it finds the daemon again through daemon.json
 * and follows on from the next index) of a turn that streams one line every 10 ms, while the daemon
 * is stopped (SIGTERM) and started again `rounds` times; the turn's CLI runs on under the keeper.
 * `gapMs`: from the last event the follower had from the stopped daemon to the first from the next;
 * `restartToReadyMs`: from the SIGTERM until the next daemon wrote its daemon.json.
 */
export async function followerGapAcrossRestart(root, { rounds = 8, betweenMs = 700 } = {}) {
  const stateDir = join(root, "restart-gap");
  const env = { FAKE_CLAUDE_LINES: "100000", FAKE_CLAUDE_GAP_MS: "10" };
  let { child, file } = await startDaemon(root, stateDir, { env });
  const session = await api(file)("POST", "/v1/sessions", { backend: "claude" });
  const turn = await api(file)("POST", `/v1/sessions/${session.id}/turns`, { prompt: "stream on" });
  const received = [];
  const follower = followAcross(stateDir, turn.id, (event) => received.push(event));
  const gaps = [];
  const readies = [];
  let adopted = 0;
  try {
    await until(() => received.length > 20, 30_000, "the turn streams");
    for (let round = 0; round < rounds; round += 1) {
      await sleep(betweenMs);
      const stoppedAt = Date.now();
      await stopDaemon(child);
      ({ child, file } = await startDaemon(root, stateDir, { env }));
      readies.push(Date.now() - stoppedAt);
      await until(
        () => received.some((event) => event.receivedAt > stoppedAt && event.daemon === file.pid),
        30_000,
        "the follower hears the next daemon",
      );
      const lastBefore = received.findLast(
        (event) => event.receivedAt <= stoppedAt || event.daemon !== file.pid,
      );
      const firstAfter = received.find((event) => event.daemon === file.pid);
      gaps.push(firstAfter.receivedAt - lastBefore.receivedAt);
      const now = await api(file)("GET", `/v1/turns/${turn.id}`);
      if (now.phase === "running") adopted += 1;
    }
    await api(file)("POST", `/v1/turns/${turn.id}/cancel`);
    await waitEnded(api(file), turn.id, { pollMs: 50 });
  } finally {
    follower.stop();
    await stopDaemon(child);
  }
  const gap = stats(gaps);
  const ready = stats(readies);
  return {
    restarts: rounds,
    turnRunningAfterEachRestart: adopted,
    lineGapMs: 10,
    followerGapMs: gap,
    restartToReadyMs: ready,
    gapToReadyP50: ratio(gap.p50, ready.p50),
    gapToReadyP99: ratio(gap.p99, ready.p99),
  };
}

/** Follows `turnId` over every daemon of `stateDir` in turn; each event noted with the daemon that sent it. */
function followAcross(stateDir, turnId, onEvent) {
  const abort = new AbortController();
  const done = (async () => {
    let from = 0;
    while (!abort.signal.aborted) {
      const file = readDaemonFile(stateDir);
      if (file === undefined) {
        await sleep(5);
        continue;
      }
      let ended = false;
      try {
        const response = await openStream(file, `/v1/turns/${turnId}/follow?from=${from}`, abort.signal);
        await readSse(response, (envelope, receivedAt) => {
          from = envelope.index + 1;
          onEvent({ index: envelope.index, type: envelope.event.type, receivedAt, daemon: file.pid });
          if (envelope.event.type === "terminal") ended = true;
        });
      } catch {
        // The daemon went away (or is not up yet): find the next one.
      }
      if (ended) return;
      await sleep(5);
    }
  })();
  return {
    stop() {
      abort.abort();
      return done;
    },
  };
}

/**
 * The keeper's cost per event: the same turns (FAKE_CLAUDE_DELTAS text deltas, written at once) read
 * through the keeper and through today's direct pipe (FLOOT_KEEPER=off), in the same run. Per event:
 * the CPU of the daemon and its helpers (the keeper or the spawner; the CLI's own excluded) while the
 * turn ran, and the span from the first journaled delta to the last; `latencyMs`, from a delta's
 * write (stamped by the CLI) to its journal entry, with one delta every 5 ms.
 */
export async function keeperCostPerEvent(root, { turns = 4, deltas = 3_000, pacedDeltas = 300 } = {}) {
  const result = {};
  for (const mode of ["off", "on"]) {
    const stateDir = join(root, `keeper-cost-${mode}`);
    const env = { FLOOT_KEEPER: mode, FAKE_CLAUDE_DELTAS: String(deltas), FAKE_CLAUDE_GAP_MS: "0" };
    const { child, file } = await startDaemon(root, stateDir, { env });
    const call = api(file);
    const session = await call("POST", "/v1/sessions", { backend: "claude" });
    // One turn first: the lazily loaded parts of the daemon and the keeper's start are not measured.
    await runTurn(call, session.id, child.pid);
    const cpuUs = [];
    const spanUs = [];
    let events = 0;
    // What the CPU rows count: the daemon and its helpers, by script.
    const counted = [...cpuMsOfTree(child.pid).keys()].map(scriptOf).sort();
    for (let round = 0; round < turns; round += 1) {
      const turn = await runTurn(call, session.id, child.pid);
      events = turn.deltas;
      cpuUs.push((turn.cpuMs * 1000) / turn.deltas);
      spanUs.push((turn.spanMs * 1000) / turn.deltas);
    }
    await stopDaemon(child);
    const paced = await startDaemon(root, stateDir, {
      env: {
        ...env,
        FAKE_CLAUDE_DELTAS: String(pacedDeltas),
        FAKE_CLAUDE_GAP_MS: "5",
        FAKE_CLAUDE_STAMP: "1",
      },
    });
    const pacedCall = api(paced.file);
    const pacedTurn = await pacedCall("POST", `/v1/sessions/${session.id}/turns`, { prompt: "paced" });
    await waitEnded(pacedCall, pacedTurn.id, { pollMs: 50 });
    const latencies = (await allEvents(pacedCall, pacedTurn.id))
      .filter((envelope) => envelope.event.type === "assistant.delta")
      .map((envelope) => Date.parse(envelope.at) - Number(/@(\d+)/.exec(envelope.event.text)?.[1]));
    await stopDaemon(paced.child);
    result[mode === "on" ? "keeper" : "directPipe"] = {
      turns,
      deltasPerTurn: events,
      cpuOf: counted,
      cpuUsPerEvent: stats(cpuUs),
      spanUsPerEvent: stats(spanUs),
      latencyMs: stats(latencies),
    };
  }
  const { keeper, directPipe } = result;
  return {
    ...result,
    cpuRatioP50: ratio(keeper.cpuUsPerEvent.p50, directPipe.cpuUsPerEvent.p50),
    spanRatioP50: ratio(keeper.spanUsPerEvent.p50, directPipe.spanUsPerEvent.p50),
    latencyRatioP50: ratio(keeper.latencyMs.p50, directPipe.latencyMs.p50),
  };
}

/** One turn to its end: its deltas, the span they were journaled over, and the CPU the daemon's side spent. */
async function runTurn(call, sessionId, daemonPid) {
  const before = cpuMsOfTree(daemonPid);
  const turn = await call("POST", `/v1/sessions/${sessionId}/turns`, { prompt: "burst" });
  await waitEnded(call, turn.id, { pollMs: 50 });
  const cpuMs = sumChanged(before, cpuMsOfTree(daemonPid));
  const deltas = (await allEvents(call, turn.id)).filter(
    (envelope) => envelope.event.type === "assistant.delta",
  );
  return { deltas: deltas.length, spanMs: Date.parse(deltas.at(-1).at) - Date.parse(deltas[0].at), cpuMs };
}

/** Every event of a turn, page by page. */
async function allEvents(call, turnId) {
  const all = [];
  for (let from = 0; ; ) {
    const page = await call("GET", `/v1/turns/${turnId}/events?from=${from}`);
    all.push(...page.events);
    if (page.events.length === 0) return all;
    from = page.nextIndex;
  }
}

/** CPU ms of `pid` and every live descendant but the CLIs (fake-claude), by pid. */
function cpuMsOfTree(pid) {
  const parentOf = new Map();
  const cpu = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes("fake-claude")) continue;
      parentOf.set(Number(name), Number(fields[1]));
      cpu.set(Number(name), ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond);
    } catch {
      // Gone meanwhile.
    }
  }
  const inTree = (each) => {
    for (let at = each; at > 1; at = parentOf.get(at) ?? 0) if (at === pid) return true;
    return false;
  };
  return new Map([...cpu].filter(([each]) => inTree(each)));
}

function scriptOf(pid) {
  const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  return (
    args
      .find((arg) => arg.endsWith(".mjs") || arg.endsWith(".js"))
      ?.split("/")
      .at(-1) ?? args[0]
  );
}

/** CPU spent between two readings by the processes of the second (one started meanwhile counts whole). */
function sumChanged(before, after) {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

async function until(predicate, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting until ${what}`);
    await sleep(5);
  }
}
