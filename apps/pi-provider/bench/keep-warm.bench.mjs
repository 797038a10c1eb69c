#!/usr/bin/env node
// Keeping the prompt cache warm through a long tool, and what it costs: Pi runs a tool that outlasts
// the double's cache lifetime (`promptCache`), with CLAUDE_BRIDGE_KEEP_WARM off and at an interval, on
// both Pi lines; samples of the two alternate. For each: the share of the request-after-the-tool's
// cacheable prefix read from the cache, the side questions asked and their tokens, and both in US
// dollars at Claude Sonnet's rates (the double counts a quarter of the characters as a token; Pi's own
// system prompt and tools make the prefix). Prints JSON.
import { startModelDouble, textReply, toolTurnScript } from "@bridgeworks/model-double";
import { createIsolatedEnvironment } from "@bridgeworks/test-harness";
import { piLines, startRpcPi } from "./pi-lines.mjs";

const samples = Number(process.env.BENCH_KEEP_WARM_SAMPLES ?? 3);
const ttlMs = Number(process.env.BENCH_CACHE_TTL_MS ?? 3000);
const toolSeconds = Number(process.env.BENCH_TOOL_SECONDS ?? 7);
// As the automatic mode schedules it: a tenth of the lifetime before it ends.
const everyMs = process.env.BENCH_KEEP_WARM_EVERY ?? `${Math.floor(ttlMs * 0.9)}ms`;
const question = "Reply with the single word ok.";
// USD per million tokens (src/models.ts, sonnet); a 5-minute cache write.
const rates = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

const usd = (usage) =>
  (usage.input_tokens * rates.input +
    usage.output_tokens * rates.output +
    usage.cache_read_input_tokens * rates.cacheRead +
    usage.cache_creation_input_tokens * rates.cacheWrite) /
  1e6;

const sum = (usages) =>
  usages.reduce(
    (total, usage) => ({
      input_tokens: total.input_tokens + usage.input_tokens,
      output_tokens: total.output_tokens + usage.output_tokens,
      cache_read_input_tokens: total.cache_read_input_tokens + usage.cache_read_input_tokens,
      cache_creation_input_tokens: total.cache_creation_input_tokens + usage.cache_creation_input_tokens,
    }),
    { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  );

async function sample(line, keepWarm) {
  const turn = toolTurnScript(
    [
      {
        id: "toolu_long",
        nameFrom: { endsWith: "__bash" },
        input: { command: `sleep ${toolSeconds}; printf SLEPT` },
      },
    ],
    "AFTER",
  );
  // Step 0 answers side questions (they carry a placeholder result for the call), 1 the tool's result.
  const double = await startModelDouble({
    promptCache: { ttlMs },
    steps: [textReply(question, "ok", { repeat: true }), ...turn.steps],
  });
  const environment = createIsolatedEnvironment({ modelUrl: double.url, model: "claude-double" });
  try {
    const pi = startRpcPi(environment, line, "claude-code", { CLAUDE_BRIDGE_KEEP_WARM: keepWarm });
    const from = pi.events().length;
    pi.send({ type: "prompt", message: "[long] run the long one" });
    await pi.waitFor((event) => event.type === "agent_end", from, 120_000);
    const requests = double.requests.filter((request) => request.api === "anthropic");
    const after = requests.find((request) => request.response.stepIndex === 1);
    if (!after) throw new Error(`keep-warm ${keepWarm}: no request after the tool reached the double`);
    const side = requests.filter((request) => request.response.stepIndex === 0).map((r) => r.response.usage);
    const usage = after.response.usage;
    return {
      readShare:
        usage.cache_read_input_tokens / (usage.cache_read_input_tokens + usage.cache_creation_input_tokens),
      after: usage,
      afterUsd: usd(usage),
      sideQuestions: side.length,
      sideTokens: sum(side),
      sideUsd: usd(sum(side)),
    };
  } finally {
    await environment.dispose();
    await double.close();
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value, digits = 4) => Math.round(value * 10 ** digits) / 10 ** digits;
const results = [];
for (const line of piLines()) {
  const runs = { off: [], on: [] };
  for (let i = 0; i < samples; i++) {
    // Alternate, so machine load falls on both alike.
    for (const [name, value] of i % 2 === 0
      ? [
          ["off", "0"],
          ["on", everyMs],
        ]
      : [
          ["on", everyMs],
          ["off", "0"],
        ])
      runs[name].push(await sample(line, value));
  }
  const summary = (list) => ({
    samples: list.length,
    readShareMedian: round(median(list.map((run) => run.readShare))),
    afterRequestUsdMedian: round(median(list.map((run) => run.afterUsd)), 6),
    sideQuestionsMedian: median(list.map((run) => run.sideQuestions)),
    sideUsdMedian: round(median(list.map((run) => run.sideUsd)), 6),
    perRun: list,
  });
  const off = summary(runs.off);
  const on = summary(runs.on);
  results.push({
    pi: line.name,
    keepWarmOff: off,
    keepWarmOn: on,
    savedPerLongToolUsd: round(off.afterRequestUsdMedian - on.afterRequestUsdMedian - on.sideUsdMedian, 6),
  });
}
process.stdout.write(
  `${JSON.stringify({ benchmark: "pi-provider keep-warm through a long tool", ttlMs, toolSeconds, everyMs, rates, results }, null, 2)}\n`,
);
