#!/usr/bin/env node
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
// One tool round, three ways, samples interleaved in one run on each Pi line:
//   claudeCode:      double -> Claude Code -> MCP handler waits -> Pi stream done -> Pi runs `read`
//                    -> streamSimple -> ledger -> MCP answer -> Claude Code -> double
//   claudeCodeAlone: double -> Claude Code runs its built-in Read -> double (the Agent SDK alone, with
//                    this provider's options, Pi's system prompt and Claude Code's tools matching Pi's
//                    four (Read, Bash, Edit, Write): the floor a round through Claude Code can reach)
//   piNative:        double -> Pi's Anthropic client -> Pi runs `read` -> Pi's client -> double
// A round is timed at the double, from the request answered with the tool call to the request that
// carries its result. Each of the three keeps one warm process for the whole run and does one round per
// sample, in an order that rotates, so load on the machine (2 cores shared with other engineers) falls
// on all three alike. Prints JSON: medians and spread per way, and the provider's median against Claude
// Code alone's (the goal: within 1.15x) beside Pi native's.
import { query } from "@anthropic-ai/claude-agent-sdk";
import { startModelDouble } from "@bridgeworks/model-double";
import { createIsolatedEnvironment } from "@bridgeworks/test-harness";
import { piLines, startRpcPi, stats } from "./pi-lines.mjs";

const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const samples = Number(process.env.BENCH_SAMPLES ?? 15);
const goal = 1.15;
// The file every round reads, by its absolute path (Claude Code's Read takes no other).
const fileDir = mkdtempSync(join(tmpdir(), "pi-round-trip-"));
const FILE = join(fileDir, "bench-read.txt");
writeFileSync(FILE, "one line to read\n");

/** Prompts `[bench-N]` answered by one read of FILE (`input`), then `ok` once its result is back. */
function script(total, input) {
  const steps = [];
  for (let i = 0; i < total; i++) {
    steps.push({
      match: { lastUserTextIncludes: `[bench-${i}]` },
      response: {
        events: [{ type: "tool_use", id: `toolu_bench_${i}`, nameFrom: { endsWith: "ead" }, input }],
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

async function setUp(input) {
  const double = await startModelDouble(script(warmup + samples, input));
  const environment = createIsolatedEnvironment({ modelUrl: double.url, model: "claude-double" });
  return { double, environment };
}

/** The round's time at the double; throws when the round did not reach it twice. */
function roundTime(way, double, i) {
  const asked = double.requests.find((request) =>
    request.response.toolCalls.some((call) => call.id === `toolu_bench_${i}`),
  );
  const answered = double.requests.find((request) => hasToolResult(request.body, `toolu_bench_${i}`));
  if (!asked || !answered) throw new Error(`${way}: round ${i} did not reach the double twice`);
  return answered.receivedAt - asked.receivedAt;
}

/** A warm `pi --mode rpc` with `provider`; `round(i)` runs prompt `[bench-i]` to its end. */
async function piWay(way, line, provider) {
  const { double, environment } = await setUp({ path: FILE });
  const pi = startRpcPi(environment, line, provider);
  await pi.call({ type: "get_state" }, 60_000);
  return {
    way,
    /** The longest system block of its first model request: Pi's system prompt. */
    systemPrompt: () =>
      (double.requests.find((request) => request.api === "anthropic")?.body?.system ?? [])
        .map((block) => block.text ?? "")
        .reduce((longest, text) => (text.length > longest.length ? text : longest), ""),
    async round(i) {
      const from = pi.events().length;
      pi.send({ type: "prompt", message: `[bench-${i}] go` });
      await pi.waitFor((event) => event.type === "agent_end", from, 60_000);
      return roundTime(way, double, i);
    },
    close: async () => {
      await environment.dispose();
      await double.close();
    },
  };
}

/**
 * Claude Code alone through the Agent SDK, with the provider's options and its built-in Read, offered
 * `tools` and told `systemPrompt`.
 */
async function claudeCodeAloneWay(way, systemPrompt, tools) {
  const { double, environment } = await setUp({ file_path: FILE });
  const pending = [];
  let wake;
  const input = {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (pending.length > 0) yield pending.shift();
        await new Promise((resolve) => {
          wake = resolve;
        });
      }
    },
  };
  const results = [];
  let resultWaiter;
  const q = query({
    prompt: input,
    options: {
      // The file is in its working folder: Claude Code decides a Read there without the slower checks
      // of a path outside it (measured: permissionDecisionMs 43 against 4 in its debug log).
      cwd: fileDir,
      env: {
        ...environment.env,
        CLAUDE_CODE_MAX_RETRIES: "0",
        DISABLE_AUTO_COMPACT: "1",
        ENABLE_CLAUDEAI_MCP_SERVERS: "0",
        CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS: "1",
      },
      model: "sonnet",
      tools,
      allowedTools: ["Read"],
      permissionMode: "dontAsk",
      strictMcpConfig: true,
      settingSources: [],
      settings: { enabledPlugins: { "agents-md@builtin": false } },
      includePartialMessages: true,
      thinking: { type: "disabled" },
      systemPrompt,
      stderr: () => {},
    },
  });
  const consuming = (async () => {
    for await (const message of q) {
      if (message.type !== "result") continue;
      results.push(message);
      resultWaiter?.();
    }
  })().catch(() => {});
  return {
    way,
    async round(i) {
      const seen = results.length;
      pending.push({
        type: "user",
        message: { role: "user", content: `[bench-${i}] go` },
        parent_tool_use_id: null,
      });
      wake?.();
      while (results.length === seen)
        await new Promise((resolve) => {
          resultWaiter = resolve;
        });
      return roundTime(way, double, i);
    },
    close: async () => {
      q.close();
      await consuming;
      await environment.dispose();
      await double.close();
    },
  };
}

async function measure(line) {
  const provider = await piWay("claudeCode", line, "claude-code");
  // Its first round tells Pi's system prompt, which Claude Code alone then gets too.
  await provider.round(0);
  const ways = [
    provider,
    await claudeCodeAloneWay("claudeCodeAlone", provider.systemPrompt(), ["Read", "Bash", "Edit", "Write"]),
    await piWay("piNative", line, "builtin-anthropic"),
    // BENCH_ALONE_MINIMAL=1: also Claude Code alone with Read only and a one-line prompt, to show what
    // the request's size costs Claude Code itself.
    ...(process.env.BENCH_ALONE_MINIMAL === "1"
      ? [await claudeCodeAloneWay("claudeCodeAloneMinimal", "Read the file you are asked to read.", ["Read"])]
      : []),
  ];
  const times = Object.fromEntries(ways.map((way) => [way.way, []]));
  try {
    for (let i = 0; i < warmup + samples; i++) {
      // Rotate who goes first, so no way always follows the same one.
      for (let k = 0; k < ways.length; k++) {
        const way = ways[(i + k) % ways.length];
        if (way === provider && i === 0) continue;
        const ms = await way.round(i);
        if (i >= warmup) times[way.way].push(ms);
      }
    }
  } finally {
    for (const way of ways) await way.close();
  }
  const summary = Object.fromEntries(Object.entries(times).map(([way, list]) => [way, stats(list)]));
  const ratio = summary.claudeCode.medianMs / summary.claudeCodeAlone.medianMs;
  // Paired: each sample's provider round over Claude Code alone's of the same rotation, so a burst of
  // load that slows one sample slows both sides of its ratio.
  const paired = times.claudeCode.map((ms, i) => ms / times.claudeCodeAlone[i]).sort((a, b) => a - b);
  const round3 = (value) => Math.round(value * 1000) / 1000;
  return {
    pi: line.name,
    toolRound: summary,
    claudeCodeOverAloneRatio: round3(ratio),
    claudeCodeOverAlonePairedMedian: round3(paired[Math.floor(paired.length / 2)]),
    withinGoal: ratio <= goal,
    piNativeOverAloneRatio: round3(summary.piNative.medianMs / summary.claudeCodeAlone.medianMs),
    addedOverAloneMedianMs:
      Math.round((summary.claudeCode.medianMs - summary.claudeCodeAlone.medianMs) * 10) / 10,
  };
}

const results = [];
const loadBefore = loadavg()[0];
try {
  for (const line of piLines()) results.push(await measure(line));
} finally {
  rmSync(fileDir, { recursive: true, force: true });
}
process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: "pi-provider tool round, interleaved",
      goal: `claudeCode within ${goal}x of claudeCodeAlone`,
      warmup,
      samples,
      loadAverage: { before: loadBefore, after: loadavg()[0] },
      results,
    },
    null,
    2,
  )}\n`,
);
