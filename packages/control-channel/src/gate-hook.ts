#!/usr/bin/env node
// The PreToolUse command hook a Floot turn's CLI runs before every tool call: `node dist/gate-hook.js
// [deadlineMs]`, configured only through FLOOT_MCP_SOCKET and FLOOT_MCP_TOKEN (see tool-gate-hook.ts).
// Whatever goes wrong, it exits 2 (the call is blocked), never with a code that lets the call run.
import { toolGateHookMain } from "./tool-gate-hook.js";

toolGateHookMain().catch((error: unknown) => {
  process.stderr.write(`floot: this tool call was NOT run: the gate failed (${String(error)}).\n`);
  process.exit(2);
});
