#!/usr/bin/env node
// Does a request made while a tool runs keep Claude Code's cached prompt prefix alive for the request
// after the tool? Claude Code alone (Agent SDK, streaming input, one in-process MCP tool that sleeps
// past the double's cache lifetime), with and without side questions (`askSideQuestion`, Claude Code's
// `/btw`) asked during the tool. Prints, per case, every model request: what it was, its cache read and
// write (the double's `promptCache` model). Measurement only: `node bench/warm-probe.mjs`.
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { startModelDouble } from "@bridgeworks/model-double";
import { createIsolatedEnvironment } from "@bridgeworks/test-harness";

const ttlMs = Number(process.env.PROBE_TTL_MS ?? 3000);
const toolMs = Number(process.env.PROBE_TOOL_MS ?? 7000);
const everyMs = Number(process.env.PROBE_WARM_EVERY_MS ?? Math.round(ttlMs * 0.6));

function lastUserText(body) {
  const last = body?.messages?.at(-1);
  if (last?.role !== "user") return "";
  const content = typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
  return content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join(" ");
}

async function run(warm) {
  const double = await startModelDouble({
    promptCache: { ttlMs },
    // A side question carries a placeholder result for the call in progress: its step comes first.
    steps: [
      {
        repeat: true,
        match: { lastUserTextIncludes: "[keep-warm]" },
        response: { events: [{ type: "text", text: "ok" }] },
      },
      {
        match: { lastUserTextIncludes: "[long]" },
        response: {
          events: [{ type: "tool_use", id: "toolu_long", nameFrom: { endsWith: "__wait" }, input: {} }],
        },
      },
      { match: { toolResultFor: "toolu_long" }, response: { events: [{ type: "text", text: "DONE" }] } },
    ],
  });
  const environment = createIsolatedEnvironment({ modelUrl: double.url });
  let release;
  const waiting = new Promise((resolve) => {
    release = resolve;
  });
  const server = createSdkMcpServer({
    name: "pi",
    version: "1.0.0",
    tools: [
      tool("wait", "Waits a while", {}, async () => {
        release();
        await new Promise((resolve) => setTimeout(resolve, toolMs));
        return { content: [{ type: "text", text: "waited" }] };
      }),
    ],
  });
  let push;
  const input = {
    async *[Symbol.asyncIterator]() {
      yield {
        type: "user",
        message: { role: "user", content: "[long] run the long tool" },
        parent_tool_use_id: null,
      };
      await new Promise((resolve) => {
        push = resolve;
      });
    },
  };
  const q = query({
    prompt: input,
    options: {
      cwd: environment.workspace,
      env: { ...environment.env, CLAUDE_CODE_MAX_RETRIES: "0" },
      tools: [],
      allowedTools: ["mcp__pi__*"],
      permissionMode: "dontAsk",
      settingSources: [],
      mcpServers: { pi: server },
      systemPrompt: `You are a probe.\n${"Pi's system prompt, long enough to matter. ".repeat(500)}`,
      stderr: () => {},
    },
  });
  const side = [];
  const asking = (async () => {
    if (!warm) return;
    await waiting;
    const until = Date.now() + toolMs - everyMs / 2;
    while (Date.now() + everyMs < until) {
      await new Promise((resolve) => setTimeout(resolve, everyMs));
      const started = Date.now();
      try {
        const answer = await q.askSideQuestion("[keep-warm] Reply with the single word ok.");
        side.push({ ms: Date.now() - started, answer });
      } catch (error) {
        side.push({ ms: Date.now() - started, error: String(error).slice(0, 300) });
      }
    }
  })();
  const seen = [];
  try {
    for await (const message of q) {
      if (message.type === "result") {
        seen.push({ result: message.subtype, is_error: message.is_error });
        break;
      }
      if (message.type === "system" && message.subtype !== "init") seen.push({ system: message.subtype });
    }
    await asking;
    push?.();
  } finally {
    q.close();
    await environment.dispose();
    await double.close();
  }
  return {
    warm,
    side,
    seen,
    requests: double.requests
      .filter((request) => request.api === "anthropic")
      .map((request) => ({
        at: request.receivedAt - double.requests[0].receivedAt,
        lastUser: lastUserText(request.body).slice(0, 60),
        messages: request.body.messages.length,
        system: JSON.stringify(request.body.system ?? "").length,
        tools: (request.body.tools ?? []).map((t) => t.name),
        model: request.body.model,
        usage: request.response.usage,
      })),
  };
}

const out = { ttlMs, toolMs, everyMs, cases: [await run(false), await run(true)] };
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
