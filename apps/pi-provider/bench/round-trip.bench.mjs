#!/usr/bin/env node
// What the claude-code provider adds to one tool round trip, next to Pi's built-in Anthropic provider
// against the same model double in the same run. One round trip = from the model request whose
// answer is a tool_use to the next model request, which carries the tool's result:
//   claude-code: double -> Claude Code -> MCP handler waits -> Pi stream done -> Pi runs the tool
//                -> streamSimple -> ledger -> MCP answer -> Claude Code -> double
//   built-in:    double -> Pi's Anthropic client -> Pi runs the tool -> Pi's Anthropic client -> double
// Both sides run the same tool (bash `true`) in one warm `pi --mode rpc` each. Prints JSON.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startModelDouble } from "@bridgeworks/model-double";
import { createIsolatedEnvironment, resolveRealClient } from "@bridgeworks/test-harness";

const appDir = dirname(dirname(fileURLToPath(import.meta.url)));
const repoRoot = join(appDir, "../..");
const warmup = Number(process.env.BENCH_WARMUP ?? 2);
const samples = Number(process.env.BENCH_SAMPLES ?? 30);

function piLines() {
  const legacy = resolveRealClient("pi");
  const lines = [{ name: `pi ${legacy.version}`, node: process.execPath, cli: legacy.executable }];
  const node24 = execFileSync(process.execPath, [join(repoRoot, "scripts/ensure-node24.mjs")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  const require = createRequire(join(appDir, "package.json"));
  for (const dir of require.resolve.paths("@earendil-works/pi-coding-agent") ?? []) {
    const manifestPath = join(dir, "@earendil-works/pi-coding-agent/package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    lines.push({
      name: `pi ${manifest.version}`,
      node: node24,
      cli: join(dirname(manifestPath), manifest.bin.pi),
    });
    break;
  }
  return lines;
}

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
    const args =
      provider === "claude-code"
        ? ["-e", appDir, "--provider", "claude-code", "--model", "sonnet"]
        : ["--provider", "double", "--model", "claude-double"];
    const pi = environment.spawn(line.node, [line.cli, "--mode", "rpc", "--no-session", "-ne", ...args], {
      keepStdinOpen: true,
      env: {
        PI_OFFLINE: "1",
        PI_SKIP_VERSION_CHECK: "1",
        CLAUDE_BRIDGE_DIAG_LOG: join(environment.root, "diag.log"),
      },
    });
    const roundTrips = [];
    for (let i = 0; i < total; i++) {
      const ends = pi.stdout().split('"type":"agent_end"').length;
      pi.child.stdin.write(`${JSON.stringify({ type: "prompt", message: `[bench-${i}] go` })}\n`);
      await pi.waitForOutput((out) => out.split('"type":"agent_end"').length > ends, 60_000);
      const asked = double.requests.find((request) =>
        request.response.toolCalls.some((call) => call.id === `toolu_bench_${i}`),
      );
      const answered = double.requests.find((request) => hasToolResult(request.body, `toolu_bench_${i}`));
      if (!asked || !answered)
        throw new Error(
          `${provider}: round ${i} did not reach the double twice: ${JSON.stringify(double.requests.map((r) => [r.path, r.response]))}\n${pi.stdout().slice(-2000)}\n${pi.stderr().slice(-2000)}`,
        );
      if (i >= warmup) roundTrips.push(answered.receivedAt - asked.receivedAt);
    }
    return stats(roundTrips);
  } finally {
    await environment.dispose();
    await double.close();
  }
}

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return {
    samples: sorted.length,
    medianMs: at(0.5),
    p90Ms: at(0.9),
    p99Ms: at(0.99),
    minMs: sorted[0],
    maxMs: sorted.at(-1),
  };
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
