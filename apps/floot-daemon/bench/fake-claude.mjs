#!/usr/bin/env node
// A stand-in for `claude -p --output-format stream-json`: it measures the daemon, not a model.
// Prints init, FAKE_CLAUDE_LINES assistant lines FAKE_CLAUDE_GAP_MS apart, then a result.
const args = process.argv.slice(2);
const at = Math.max(args.indexOf("--session-id"), args.indexOf("--resume"));
const sessionId = at >= 0 ? args[at + 1] : "00000000-0000-4000-8000-000000000000";
const lines = Number(process.env.FAKE_CLAUDE_LINES ?? 0);
const gap = Number(process.env.FAKE_CLAUDE_GAP_MS ?? 0);
const emit = (value) => process.stdout.write(`${JSON.stringify({ ...value, session_id: sessionId })}\n`);
process.stdin.resume();
process.stdin.on("end", async () => {
  emit({ type: "system", subtype: "init", mcp_servers: [{ name: "floot", status: "connected" }] });
  for (let i = 0; i < lines; i += 1) {
    if (gap) await new Promise((resolve) => setTimeout(resolve, gap));
    emit({
      type: "assistant",
      message: { id: `m${i}`, role: "assistant", content: [{ type: "text", text: `line ${i}` }] },
    });
  }
  emit({ type: "result", subtype: "success", is_error: false, result: "done", num_turns: 1 });
});
