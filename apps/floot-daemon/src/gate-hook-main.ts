#!/usr/bin/env node
// The PreToolUse hook each turn's CLI runs before every tool call, bundled as `bundle/gate-hook.mjs`:
// it exits 0 only once the daemon has journaled the call, else 2 (the call is blocked).
import { toolGateHookMain } from "@bridgeworks/control-channel";

toolGateHookMain().catch((error: unknown) => {
  process.stderr.write(`floot: this tool call was NOT run: the gate failed (${String(error)}).\n`);
  process.exit(2);
});
