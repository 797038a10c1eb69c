#!/usr/bin/env node
// A stand-in for `claude -p --output-format stream-json`: it measures the daemon, not a model.
// Prints init, FAKE_CLAUDE_LINES assistant lines FAKE_CLAUDE_GAP_MS apart, then a result. With
// FAKE_CLAUDE_TOOL_CALLS=N it first runs the turn's PreToolUse hook (from its --settings, as Claude
// Code runs it: `sh -c`, the hook input on stdin) N times, appending each run's ms and exit code to
// FAKE_CLAUDE_GATE_LOG. With FAKE_CLAUDE_DELTAS=N it streams one answer as N text deltas (GAP_MS apart), in
// the lines Claude Code 2.1.332 prints with --include-partial-messages: `stream_event` lines carrying the
// raw Messages SSE events (message_start, content_block_start, content_block_delta/text_delta,
// content_block_stop, message_stop), then the whole `assistant` message (the shapes as recorded from the
// real binary: packages/backend-adapters/test/fixtures/claude/text.jsonl, which claude-translator.test.ts
// replays through backend-adapters' claude-translator.ts, the parser the daemon uses). FAKE_CLAUDE_STAMP=1
// puts the time each delta was written (Date.now()) in its text.
import { spawnSync } from "node:child_process";
import { appendFileSync } from "node:fs";

const args = process.argv.slice(2);
const at = Math.max(args.indexOf("--session-id"), args.indexOf("--resume"));
const sessionId = at >= 0 ? args[at + 1] : "00000000-0000-4000-8000-000000000000";
const lines = Number(process.env.FAKE_CLAUDE_LINES ?? 0);
const gap = Number(process.env.FAKE_CLAUDE_GAP_MS ?? 0);
const emit = (value) => process.stdout.write(`${JSON.stringify({ ...value, session_id: sessionId })}\n`);
process.stdin.resume();
function runGate(index) {
  const settings = JSON.parse(args[args.indexOf("--settings") + 1]);
  const hook = settings.hooks.PreToolUse[0].hooks[0];
  const input = {
    session_id: sessionId,
    transcript_path: "/dev/null",
    cwd: process.cwd(),
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: `echo ${index}` },
    tool_use_id: `toolu_bench_${index}`,
  };
  const startedAt = performance.now();
  const run = spawnSync("/bin/sh", ["-c", hook.command], { input: JSON.stringify(input) });
  appendFileSync(process.env.FAKE_CLAUDE_GATE_LOG, `${performance.now() - startedAt} ${run.status}\n`);
}

process.stdin.on("end", async () => {
  emit({ type: "system", subtype: "init", mcp_servers: [{ name: "floot", status: "connected" }] });
  for (let i = 0; i < Number(process.env.FAKE_CLAUDE_TOOL_CALLS ?? 0); i += 1) runGate(i);
  await streamDeltas(Number(process.env.FAKE_CLAUDE_DELTAS ?? 0));
  for (let i = 0; i < lines; i += 1) {
    if (gap) await new Promise((resolve) => setTimeout(resolve, gap));
    emit({
      type: "assistant",
      message: { id: `m${i}`, role: "assistant", content: [{ type: "text", text: `line ${i}` }] },
    });
  }
  emit({ type: "result", subtype: "success", is_error: false, result: "done", num_turns: 1 });
});

async function streamDeltas(count) {
  if (count === 0) return;
  const partial = (event) => emit({ type: "stream_event", event, parent_tool_use_id: null });
  partial({ type: "message_start", message: { id: "msg_bench", role: "assistant", content: [] } });
  partial({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
  const parts = [];
  for (let i = 0; i < count; i += 1) {
    if (gap) await new Promise((resolve) => setTimeout(resolve, gap));
    // FAKE_CLAUDE_STAMP: each delta carries when it was written, for a write-to-journal latency.
    const text = process.env.FAKE_CLAUDE_STAMP ? `token ${i} @${Date.now()} ` : `token ${i} `;
    parts.push(text);
    partial({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } });
  }
  partial({ type: "content_block_stop", index: 0 });
  partial({ type: "message_stop" });
  emit({
    type: "assistant",
    message: { id: "msg_bench", role: "assistant", content: [{ type: "text", text: parts.join("") }] },
    parent_tool_use_id: null,
  });
}
