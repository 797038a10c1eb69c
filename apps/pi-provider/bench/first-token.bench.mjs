#!/usr/bin/env node
import { cpus, loadavg } from "node:os";
// Time from a prompt to Pi's first streamed text token, for the claude-code provider and for Pi's
// built-in Anthropic provider against the same model double, on both Pi lines, in one run:
// - RPC, the first prompt of a Pi process: `pi --mode rpc` starts, its `get_state` answer says Pi is
//   ready, one second passes (a person typing), then the prompt;
// - RPC, the first prompt of a new session in that process: `new_session` answered, one second, the prompt;
// - one-shot (`pi --mode json "<prompt>"`, Pi's print mode with events): from the process start.
// `claudeCodeCold` is the provider with CLAUDE_BRIDGE_WARM_START=0 (Claude Code starts at the prompt),
// for what the warm start saves; with BENCH_BASELINE_EXTENSION=<dir>, `claudeCodeBaseline` is another
// build of this package (e.g. main's) measured in the same run. Samples of the providers alternate, so load on the machine falls on
// all alike. Prints JSON.
import { startModelDouble } from "@bridgeworks/model-double";
import { createIsolatedEnvironment } from "@bridgeworks/test-harness";
import { delay, isTextDelta, piLines, providerArgs, providerEnv, startRpcPi, stats } from "./pi-lines.mjs";

const samples = Number(process.env.BENCH_FIRST_TOKEN_SAMPLES ?? 7);
const thinkMs = Number(process.env.BENCH_THINK_MS ?? 1000);
// BENCH_ONE_SHOT=0: the RPC cases only (a shorter run).
const withOneShot = process.env.BENCH_ONE_SHOT !== "0";
const withinMs = 150;
const script = {
  steps: [{ repeat: true, response: { events: [{ type: "text", text: "ready when you are" }] } }],
};

async function withDouble(run) {
  const double = await startModelDouble(script);
  const environment = createIsolatedEnvironment({ modelUrl: double.url, model: "claude-double" });
  try {
    return await run(environment, double);
  } finally {
    await environment.dispose();
    await double.close();
  }
}

async function promptToFirstToken(pi, message) {
  const from = pi.events().length;
  const sent = performance.now();
  pi.send({ type: "prompt", message });
  const token = await pi.waitFor(isTextDelta, from);
  await pi.waitFor((event) => event.type === "agent_end", from);
  return token.at - sent;
}

/** One Pi process: its first prompt, then the first prompt of a new session in it. */
function rpcSample(line, provider) {
  return withDouble(async (environment, double) => {
    const pi = startRpcPi(environment, line, provider);
    await pi.call({ type: "get_state" }, 60_000);
    await delay(thinkMs);
    const process_ = await promptToFirstToken(pi, "[bench] first");
    await pi.call({ type: "new_session" }, 60_000);
    await delay(thinkMs);
    const session = await promptToFirstToken(pi, "[bench] again");
    const answered = double.requests.filter((request) => request.path.startsWith("/v1/messages")).length;
    if (answered !== 2) throw new Error(`${provider}: expected 2 model requests, the double saw ${answered}`);
    return { process: process_, session };
  });
}

/** One one-shot run: from spawning Pi to its first text token, and to its exit. */
function oneShotSample(line, provider) {
  return withDouble(async (environment) => {
    const started = performance.now();
    const pi = environment.spawn(
      line.node,
      [line.cli, "--mode", "json", "--no-session", "-ne", ...providerArgs(provider), "[bench] once"],
      { env: { PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", ...providerEnv(provider) } },
    );
    let firstToken;
    await pi.waitForOutput((out) => {
      if (firstToken === undefined && out.split("\n").some((line_) => line_.includes('"text_delta"')))
        firstToken = performance.now() - started;
      return firstToken !== undefined;
    }, 60_000);
    const exit = await pi.exited;
    if (exit.code !== 0)
      throw new Error(`${provider} one-shot exited ${exit.code}: ${pi.stderr().slice(-2000)}`);
    return { firstToken, exit: performance.now() - started };
  });
}

const baseline = process.env.BENCH_BASELINE_EXTENSION;
const providers = [
  "builtin-anthropic",
  "claude-code",
  "claude-code-cold",
  ...(baseline ? ["claude-code-baseline"] : []),
];
const round = (value) => Math.round(value * 10) / 10;

function compare(runs, field) {
  const [native, claudeCode, cold, before] = providers.map((provider) =>
    stats(runs[provider].map((run) => run[field])),
  );
  const added = claudeCode.medianMs - native.medianMs;
  return {
    builtinAnthropic: native,
    claudeCode,
    claudeCodeCold: cold,
    addedByProviderMedianMs: round(added),
    addedByProviderP99Ms: round(claudeCode.p99Ms - native.p99Ms),
    savedByWarmStartMedianMs: round(cold.medianMs - claudeCode.medianMs),
    ...(before
      ? {
          claudeCodeBaseline: before,
          addedByBaselineMedianMs: round(before.medianMs - native.medianMs),
          addedByBaselineP99Ms: round(before.p99Ms - native.p99Ms),
        }
      : {}),
    [`within${withinMs}ms`]: added <= withinMs,
  };
}

const loadBefore = loadavg();
const loads = [];
const results = [];
for (const line of piLines()) {
  const rpc = Object.fromEntries(providers.map((provider) => [provider, []]));
  const oneShot = Object.fromEntries(providers.map((provider) => [provider, []]));
  for (let i = 0; i < samples; i++) {
    for (const provider of providers) {
      loads.push(loadavg()[0]);
      rpc[provider].push(await rpcSample(line, provider));
      if (withOneShot) oneShot[provider].push(await oneShotSample(line, provider));
    }
  }
  results.push({
    pi: line.name,
    rpcFirstPromptOfProcess: compare(rpc, "process"),
    rpcFirstPromptOfNewSession: compare(rpc, "session"),
    ...(withOneShot
      ? { oneShotFirstToken: compare(oneShot, "firstToken"), oneShotExit: compare(oneShot, "exit") }
      : {}),
  });
}
process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: "pi-provider time to first text token",
      samples,
      thinkMs,
      ...(baseline ? { baselineExtension: baseline } : {}),
      // The machine's load average (1 min) before, at each sample (median, max) and after: a loaded
      // machine slows Claude Code's start.
      loadAverage: {
        before: loadBefore[0],
        duringMedian: stats(loads).medianMs,
        duringMax: stats(loads).maxMs,
        after: loadavg()[0],
        cpus: cpus().length,
      },
      results,
    },
    null,
    2,
  )}\n`,
);
