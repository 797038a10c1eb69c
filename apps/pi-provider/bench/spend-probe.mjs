#!/usr/bin/env node
// What Claude Code (through the Agent SDK, subscription auth) reports when its plan window is used up
// and extra usage (overage) would apply: the double answers each prompt with the subscription
// rate-limit headers of a case below; prints, per case, the rate_limit_event(s) Claude Code emitted,
// the result, and how many model requests reached the double. Measurement only
// (docs/spending-guard.md): `node bench/spend-probe.mjs`.
import { query } from "@anthropic-ai/claude-agent-sdk";
import { startModelDouble } from "@bridgeworks/model-double";
import { createIsolatedEnvironment } from "@bridgeworks/test-harness";

const reset = Math.floor(Date.now() / 1000) + 2 * 3600;
const cases = {
  "window used up, extra usage available (200)": {
    status: 200,
    headers: {
      "anthropic-ratelimit-unified-status": "rejected",
      "anthropic-ratelimit-unified-reset": String(reset),
      "anthropic-ratelimit-unified-representative-claim": "five_hour",
      "anthropic-ratelimit-unified-5h-utilization": "1",
      "anthropic-ratelimit-unified-5h-reset": String(reset),
      "anthropic-ratelimit-unified-overage-status": "allowed",
      "anthropic-ratelimit-unified-overage-reset": String(reset + 86400 * 20),
    },
  },
  "extra usage already in use, window allowed (200)": {
    status: 200,
    headers: {
      "anthropic-ratelimit-unified-status": "allowed",
      "anthropic-ratelimit-unified-reset": String(reset),
      "anthropic-ratelimit-unified-representative-claim": "five_hour",
      "anthropic-ratelimit-unified-overage-status": "allowed",
      "anthropic-ratelimit-unified-overage-in-use": "true",
    },
  },
  "window used up, extra usage off (429)": {
    status: 429,
    headers: {
      "anthropic-ratelimit-unified-status": "rejected",
      "anthropic-ratelimit-unified-reset": String(reset),
      "anthropic-ratelimit-unified-representative-claim": "five_hour",
      "anthropic-ratelimit-unified-overage-status": "rejected",
      "anthropic-ratelimit-unified-overage-disabled-reason": "out_of_credits",
    },
  },
  "weekly window used up, extra usage available (200)": {
    status: 200,
    headers: {
      "anthropic-ratelimit-unified-status": "rejected",
      "anthropic-ratelimit-unified-reset": String(reset + 3 * 86400),
      "anthropic-ratelimit-unified-representative-claim": "seven_day",
      "anthropic-ratelimit-unified-7d-utilization": "1",
      "anthropic-ratelimit-unified-7d-reset": String(reset + 3 * 86400),
      "anthropic-ratelimit-unified-overage-status": "allowed_warning",
      "anthropic-ratelimit-unified-overage-utilization": "0.85",
    },
  },
};

const out = {};
for (const [name, spec] of Object.entries(cases)) {
  const response =
    spec.status === 200
      ? { events: [{ type: "text", text: "OK" }], headers: spec.headers }
      : { error: { status: 429, message: "usage limit" }, headers: spec.headers };
  const double = await startModelDouble({ steps: [{ repeat: true, response }] });
  const environment = createIsolatedEnvironment({ modelUrl: double.url });
  // Subscription auth: Claude Code reports rate-limit events only then, never on an API key.
  const { ANTHROPIC_API_KEY: _apiKey, ...env } = {
    ...environment.env,
    CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-double",
  };
  const seen = [];
  try {
    for (const prompt of ["first", "second"]) {
      const q = query({
        prompt,
        options: {
          cwd: environment.workspace,
          env: { ...env, CLAUDE_CODE_MAX_RETRIES: "0" },
          tools: [],
          permissionMode: "dontAsk",
          settingSources: [],
          // The Agent SDK's own Claude Code unless CLAUDE_BRIDGE_CLAUDE_PATH names another.
          ...(process.env.CLAUDE_BRIDGE_CLAUDE_PATH
            ? { pathToClaudeCodeExecutable: process.env.CLAUDE_BRIDGE_CLAUDE_PATH }
            : {}),
          stderr: () => {},
        },
      });
      try {
        for await (const message of q) {
          if (message.type === "rate_limit_event")
            seen.push({ prompt, rate_limit_info: message.rate_limit_info });
          else if (message.type === "result")
            seen.push({
              prompt,
              result: { subtype: message.subtype, is_error: message.is_error, result: message.result },
            });
          else if (message.type === "assistant" && message.error)
            seen.push({ prompt, assistantError: message.error });
          else if (message.type === "system" && message.subtype !== "init")
            seen.push({ prompt, system: message.subtype });
        }
      } catch (error) {
        seen.push({ prompt, thrown: String(error).slice(0, 300) });
      }
    }
    out[name] = {
      requestsToModel: double.requests.filter((r) => r.api === "anthropic").length,
      messages: seen,
    };
  } finally {
    await environment.dispose();
    await double.close();
  }
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
