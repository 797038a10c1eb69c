import { homedir } from "node:os";
import { defineCommand, defineGroup, integer, UsageError } from "@bridgeworks/cli";
import { ActionRecipient, DeciderName } from "@bridgeworks/protocol";
import { runBridge } from "../bridge.js";
import { readAll, runSessionStartHook, systemHookIo } from "../hook.js";
import { runPermissionRequestHook } from "../permission-hook.js";
import { beeVersion } from "../version.js";
import { parseValue } from "./board-options.js";
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

/** The bound `bee setup claude --escalate` gives a worker's wait, unless told otherwise. */
export const defaultEscalateTimeoutSeconds = 300;

const permissionRequestCommand = command({
  name: "permission-request",
  summary: "the PermissionRequest hook: asks the board, waits for a decision, allows or denies once",
  description:
    "Reads the hook JSON on stdin; prints only the answer. The board is BEE_BOARD (else the state dir),\n" +
    "the asking agent BEE_AGENT (else the session's folder). No decision within --timeout denies the call.",
  options: {
    to: {
      type: "string",
      placeholder: "human:NAME|AGENT",
      required: true,
      summary: "whom to ask: a person (human:NAME) or a lead agent by name",
    },
    decider: {
      type: "string",
      placeholder: "NAME",
      multiple: true,
      summary:
        "who may decide: human, human:NAME or an agent's name (default: --to, and people for an agent)",
    },
    timeout: {
      type: "string",
      placeholder: "SECONDS",
      summary: `deny after SECONDS without a decision (default ${defaultEscalateTimeoutSeconds})`,
      parse: integer(1, 86_400),
    },
  },
  async run({ options }, context) {
    const to = parseValue(ActionRecipient, options.to, "--to");
    if (to === "*") throw new UsageError("--to", "ask one person (human:NAME) or one lead agent, not *");
    const deciders = options.decider.map((decider) => parseValue(DeciderName, decider, "--decider"));
    const stopping = new AbortController();
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => stopping.abort());
    return runPermissionRequestHook(
      {
        env: context.env,
        homeDir: homedir(),
        readStdin: () => readAll(process.stdin, 1024 * 1024),
        stdout: context.stdout,
        stderr: context.stderr,
        stopping: stopping.signal,
      },
      {
        to,
        deciders: deciders.length > 0 ? deciders : to.startsWith("human:") ? [to] : [to, "human"],
        timeoutMs: (options.timeout ?? defaultEscalateTimeoutSeconds) * 1000,
      },
    );
  },
});

export const hookGroup = defineGroup<BeeContext>("hook", "Claude Code hooks", [
  sessionStartCommand,
  permissionRequestCommand,
]);
