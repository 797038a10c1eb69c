#!/usr/bin/env node
// What the claude-code provider adds to one tool round trip, next to Pi's built-in Anthropic provider
// against the same model double in the same run. One round trip = from the model request whose
// answer is a tool_use to the next model request, which carries the tool's result:
//   claude-code: double -> Claude Code -> MCP handler waits -> Pi stream done -> Pi runs the tool
//                -> streamSimple -> ledger -> MCP answer -> Claude Code -> double
//   built-in:    double -> Pi's Anthropic client -> Pi runs the tool -> Pi's Anthropic client -> double
// Both sides run the same tool (bash `true`) in one warm `pi --mode rpc` each. Prints JSON.
import { cacheStability, startModelDouble } from "@bridgeworks/model-double";
import { createIsolatedEnvironment } from "@bridgeworks/test-harness";
import { piLines, startRpcPi, stats } from "./pi-lines.mjs";

const warmup = Number(process.env.BENCH_WARMUP ?? 2);
const samples = Number(process.env.BENCH_SAMPLES ?? 30);

function script(total) {
  const steps = [];
  for (let i = 0; i < total; i++) {
    steps.push({
      match: { lastUserTextIncludes: `[bench-${i}]` },
      response: {
        events: [
          {
            type: "tool_use",
            id: `toolu_bench_${i}`,
            nameFrom: { endsWith: "bash" },
            input: { command: "true" },
          },
        ],
      },
    });
    steps.push({
      match: { toolResultFor: `toolu_bench_${i}` },
      response: { events: [{ type: "text", text: "ok" }] },
    });
  }
  return { steps };
}

function hasToolResult(body, id) {
  return (body?.messages ?? []).some(
    (message) =>
      Array.isArray(message.content) &&
      message.content.some((block) => block.type === "tool_result" && block.tool_use_id === id),
  );
}

async function measure(line, provider) {
  const total = warmup + samples;
  const double = await startModelDouble(script(total));
  const environment = createIsolatedEnvironment({ modelUrl: double.url, model: "claude-double" });
  try {
    const pi = startRpcPi(environment, line, provider);
    const roundTrips = [];
    for (let i = 0; i < total; i++) {
      const from = pi.events().length;
      pi.send({ type: "prompt", message: `[bench-${i}] go` });
      await pi.waitFor((event) => event.type === "agent_end", from);
      const asked = double.requests.find((request) =>
        request.response.toolCalls.some((call) => call.id === `toolu_bench_${i}`),
      );
      const answered = double.requests.find((request) => hasToolResult(request.body, `toolu_bench_${i}`));
      if (!asked || !answered)
        throw new Error(
          `${provider}: round ${i} did not reach the double twice: ${JSON.stringify(double.requests.map((r) => [r.path, r.response]))}\n${pi.process.stdout().slice(-2000)}\n${pi.process.stderr().slice(-2000)}`,
        );
      if (i >= warmup) roundTrips.push(answered.receivedAt - asked.receivedAt);
    }
    // Every prompt of the run is one conversation: how often did its cached prompt prefix break?
    const cache = cacheStability(double.requests);
    return { ...stats(roundTrips), cache: { requests: cache.requests.length, rebuilds: cache.rebuilds } };
  } finally {
    await environment.dispose();
    await double.close();
  }
}

const results = [];
for (const line of piLines()) {
  const builtin = await measure(line, "builtin-anthropic");
  const claudeCode = await measure(line, "claude-code");
  results.push({
    pi: line.name,
    toolRoundTrip: { builtinAnthropic: builtin, claudeCode },
    addedByProviderMedianMs: claudeCode.medianMs - builtin.medianMs,
  });
}
process.stdout.write(
  `${JSON.stringify({ benchmark: "pi-provider tool round trip", warmup, results }, null, 2)}\n`,
);
