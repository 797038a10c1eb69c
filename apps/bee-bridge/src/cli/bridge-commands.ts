import { defineCommand, defineGroup } from "@bridgeworks/cli";
import { runBridge } from "../bridge.js";
import { runSessionStartHook, systemHookIo } from "../hook.js";
import { beeVersion } from "../version.js";
import type { BeeContext } from "./context.js";

const command = defineCommand<BeeContext>();

export const bridgeCommand = command({
  name: "bridge",
  summary: "the MCP stdio server of one Claude Code session (Claude Code starts it)",
  description:
    "Settings come from the environment: BEE_AGENT, BEE_BOARD, BEE_RUN_DIR, BEE_LOG_LEVEL, BEE_LOG_FILE,\n" +
    "BEE_PROGRESS_INTERVAL_MS, BEE_BUSY_TIMEOUT_MS, BEE_CHANNEL (see the README).",
  async run() {
    // Serves until Claude Code ends it; the lifecycle exits the process.
    await runBridge(beeVersion);
  },
});

const sessionStartCommand = command({
  name: "session-start",
  summary: "the fallback SessionStart command hook: retires the bridge's identity on /clear",
  description: "Reads the hook JSON on stdin; prints only the SessionStart output after a retire.",
  run: () => runSessionStartHook(systemHookIo()),
});

export const hookGroup = defineGroup<BeeContext>("hook", "Claude Code hooks", [sessionStartCommand]);
