import type { ModelDouble, ScriptInput } from "@bridgeworks/model-double";
import type { IsolatedEnvironment } from "@bridgeworks/test-harness";

export declare const bundlePath: string;
export declare const waitTool: "mcp__bee__bee_wait_action";
export declare const sessionEventTool: "mcp__bee__bee_session_event";

export interface BeeEnvironment {
  BEE_BOARD: string;
  BEE_RUN_DIR: string;
  BEE_AGENT: string;
  BEE_LOG_LEVEL: string;
  BEE_LOG_FILE: string;
}
export declare function beeEnvironment(root: string): BeeEnvironment;
/** Writes `<root>/mcp.json` naming the bee bundle as the `bee` stdio server; returns its path. */
export declare function writeBeeMcpConfig(root: string, beeEnv: BeeEnvironment): string;

export type LogEntry = Record<string, unknown>;
export declare function readLogEntries(path: string): LogEntry[];
export declare function waitFor<T>(
  check: () => T | undefined | false,
  timeoutMs: number,
  what?: string,
): Promise<T>;

export interface SessionStartHook {
  type: string;
  timeout: number;
  [field: string]: unknown;
}
export declare const mcpToolHook: SessionStartHook;
export declare const commandHook: SessionStartHook;

export interface InteractiveClaudeOptions {
  steps: ScriptInput["steps"];
  /** The SessionStart hook for matcher `clear` (default `mcpToolHook`); only with `config: "flags"`. */
  hook?: SessionStartHook;
  /**
   * `"flags"` (default): the bridge, `hook` and the deny come from `--mcp-config --strict-mcp-config` and
   * `--settings`. `"workspace"`: no such flags; only the files in place when claude starts apply (see
   * `beforeStart`), and bee's variables are in claude's environment (`environment.env`), which the bridge
   * inherits. Both pass `--allowedTools mcp__bee__bee_wait_action` (auto mode cannot check against the double).
   */
  config?: "flags" | "workspace";
  /** Runs after the environment exists and before claude starts, e.g. to run `bee setup claude`. */
  beforeStart?: (session: InteractiveClaude) => void | Promise<void>;
  /** More of claude's own arguments, e.g. `--dangerously-load-development-channels server:bee`. */
  extraArgs?: readonly string[];
  /** More variables for the bridge, e.g. `BEE_CHANNEL: "1"`. */
  beeEnvExtra?: Record<string, string>;
}

export interface InteractiveClaude {
  double: ModelDouble;
  environment: IsolatedEnvironment;
  beeEnv: BeeEnvironment;
  /** The tmux `-L` socket name. */
  socket: string;
  /** The pid of claude itself; undefined until it is started. */
  readonly claudePid: number | undefined;
  tmux(...args: string[]): string;
  /** The bridge's log lines so far. */
  log(): LogEntry[];
  waitForLog(predicate: (entry: LogEntry) => boolean, timeoutMs: number, what?: string): Promise<LogEntry>;
  /** Types `text` literally into the session, then Enter. */
  type(text: string): Promise<void>;
  /** Sends one key (tmux key name, e.g. `Escape`). */
  press(key: string): void;
  /** The pane's text, with up to `lines` (default 200) lines of its history. */
  pane(lines?: number): string;
  /** Ends the tmux server, claude and the bridge by pid, then removes the environment. Idempotent. */
  close(): Promise<void>;
}

export declare function startInteractiveClaude(options: InteractiveClaudeOptions): Promise<InteractiveClaude>;

export declare function waitOnPromptSteps(marker: string): ScriptInput["steps"];

export interface EscapeDuringWait {
  /** The bridge's `tools/call` log line for the wait. */
  call: LogEntry;
  /** The bridge's `tool call cancelled` log line. */
  cancelled: LogEntry;
  /** Wall-clock ms right before tmux was asked to send Escape. */
  pressedAt: number;
  /** Wall-clock ms of the `tool call cancelled` line. */
  cancelledAt: number;
}
export declare function escapeDuringWait(
  session: InteractiveClaude,
  prompt: string,
  options?: { settleMs?: number; timeoutMs?: number },
): Promise<EscapeDuringWait>;
