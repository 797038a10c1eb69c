import type { Backend, BackendEvent, TurnError } from "@bridgeworks/protocol";
import type { CliExit, CliLaunch } from "./cli-process.js";
import type { ConfinementSpec } from "./confinement.js";

/** How a turn's CLI reaches the daemon's MCP server: a stdio command (the shim) the CLI starts itself. */
export interface McpMount {
  command: string;
  args: readonly string[];
  env?: Readonly<Record<string, string>>;
}

export interface McpSpec {
  /** The MCP server name the CLI sees; tools are `mcp__<serverName>__<tool>`. Default `floot`. */
  serverName?: string;
  mount: McpMount;
  /** Tool names as the server lists them (`requestSecret`, ...); Claude Code allows exactly these. */
  tools: readonly string[];
  /** How long one tool call may take: long enough for a human answering a secret form. */
  toolTimeoutMs: number;
  /**
   * Claude Code only: the server's tool that answers permission prompts (`--permission-prompt-tool
   * mcp__<serverName>__<tool>`), asked for every call outside the turn's rules.
   */
  permissionPromptTool?: string;
}

/**
 * The pre-tool gate: a command every tool call of the turn must pass before it runs (a `PreToolUse`
 * hook, configured in the turn's own CLI arguments, never in the user's files). It exits 0 only once
 * the daemon has recorded the call; anything else blocks the call.
 */
export interface ToolGateSpec {
  /** Absolute path of the program, e.g. node. */
  command: string;
  /** e.g. the hook script; the deadline is appended. */
  args: readonly string[];
  /** Put into the CLI's own environment (hooks inherit it), never argv: the turn's socket and token. */
  env: Readonly<Record<string, string>>;
  /** How long the hook waits for the daemon before it blocks the call. */
  deadlineMs: number;
}

/** The backend conversation a turn continues. */
export interface ConversationRef {
  id: string;
  /**
   * True once an earlier turn of this conversation has finished, so the backend must already hold
   * it: a missing transcript is then reported as `backend_conversation_missing` instead of silently
   * starting an empty conversation under the same id.
   */
  established: boolean;
}

export interface TurnSpec {
  prompt: string;
  /** The agent's working folder. */
  cwd: string;
  /**
   * Claude: the session UUID (a new one is minted when absent). Codex: the thread id of an earlier
   * turn, absent for the first turn.
   */
  conversation?: ConversationRef;
  mcp?: McpSpec;
  gate?: ToolGateSpec;
  /** The CLI's own sandbox around every command; absent: the turn runs unconfined. */
  confinement?: ConfinementSpec;
}

/** Everything needed to spawn one turn; built before spawning so the daemon can journal it first. */
export interface PreparedTurn {
  backend: Backend;
  launch: CliLaunch;
  /** Known before spawn (Claude always, Codex when resuming); otherwise reported by `backend.started`. */
  conversationId: string | undefined;
  /** True when the CLI is told to resume an existing conversation rather than start one. */
  resuming: boolean;
  translator: StreamTranslator;
}

export interface TranslatedLine {
  events: BackendEvent[];
  /** Set when the stream shows the turn cannot succeed (e.g. the MCP bridge failed): stop the CLI. */
  abort?: TurnError;
}

/** The terminal phase an adapter reports; the names match the journal's turn phases. */
export type TurnOutcome =
  | { phase: "completed" }
  | { phase: "failed"; error: TurnError }
  | { phase: "cancelled" };

export interface ClassifyContext {
  /** The caller stopped the process. */
  stopRequested: boolean;
}

/**
 * Turns one CLI's stdout into normalized events, one line at a time, and classifies its exit.
 * Stateful: one translator per turn.
 */
export interface StreamTranslator {
  /**
   * Synchronous: the events of a line, in order, including `backend.started` from the line that
   * carries the conversation id, so a caller can journal them before it reads the next line.
   */
  translate(line: string): TranslatedLine;
  classify(exit: CliExit, context: ClassifyContext): TurnOutcome;
}

export interface BackendAdapter {
  readonly backend: Backend;
  /**
   * Tools (as the CLI's pre-tool hook names them) that only read, so calling them is no effect: the
   * default a session may replace.
   */
  readonly effectFreeTools: readonly string[];
  prepareTurn(turn: TurnSpec): PreparedTurn;
}

export const defaultMcpServerName = "floot";
