import { randomUUID as nodeRandomUUID } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import type { BackendAdapter, McpSpec, PreparedTurn, ToolGateSpec, TurnSpec } from "./backend-adapter.js";
import { claudeConfigDir, claudeTranscriptPath } from "./claude-transcript.js";
import { createClaudeTranslator } from "./claude-translator.js";
import { claudeConfinementSettings } from "./confinement.js";
import { type EnvironmentSource, mergeEnvironment } from "./environment.js";
import { checkedToolNames, checkedToolTimeoutMs, mcpServerName } from "./mcp-names.js";
import { completionHookShellCommand, gateHookShellCommand, gateHookTimeoutSeconds } from "./tool-gate.js";

export interface ClaudeFileSystem {
  exists(path: string): boolean;
  /** The physical path (symlinks resolved): Claude Code names its project folder after it. */
  realpath(path: string): string;
}

export interface ClaudeAdapterOptions {
  /** Default `claude` (looked up on the environment's PATH). */
  command?: string;
  /** Default `process.env`: the user's own configuration and login apply. */
  baseEnv?: EnvironmentSource;
  /** The session's additions to the environment. */
  env?: Readonly<Record<string, string>>;
  model?: string;
  /** Stream text deltas (`assistant.delta`) as well as whole blocks. */
  includePartialMessages?: boolean;
  /** Tools allowed besides the mounted MCP server's, e.g. `Bash`. */
  allowedTools?: readonly string[];
  /** Appended to the argv as given, e.g. `--permission-mode dontAsk`. */
  extraArgs?: readonly string[];
  /** Said when the command cannot be found or run; default: how to install Claude Code with npm. */
  installHint?: string;
  fs?: ClaudeFileSystem;
  randomUUID?: () => string;
}

/** Claude Code's tools that only read (2.1.332): calling them is no effect. */
export const claudeEffectFreeTools: readonly string[] = ["Read", "Grep", "Glob", "LS"];
export const claudeInstallHint = "Install Claude Code with: npm install -g @anthropic-ai/claude-code";

const nodeFileSystem: ClaudeFileSystem = { exists: existsSync, realpath: (path) => realpathSync(path) };
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * One `claude -p` per turn. The prompt goes to stdin as one stream-json user message (no argv length
 * limit, and `--allowedTools` is variadic: a prompt after it would be read as a tool name). The
 * session UUID is the daemon's: `--session-id` while no transcript exists, `--resume` once one does.
 * A `gate` becomes a `PreToolUse` hook in the turn's own `--settings` (never without hooks: `--bare`
 * would skip it), and a `confinement` its `sandbox` and file tools' deny rules in the same settings.
 */
export function createClaudeAdapter(options: ClaudeAdapterOptions = {}): BackendAdapter {
  const command = options.command ?? "claude";
  const fs = options.fs ?? nodeFileSystem;
  const randomUUID = options.randomUUID ?? nodeRandomUUID;

  return {
    backend: "claude",
    effectFreeTools: claudeEffectFreeTools,
    prepareTurn(turn: TurnSpec): PreparedTurn {
      const sessionId = turn.conversation?.id ?? randomUUID();
      if (!uuidPattern.test(sessionId))
        throw new Error(`conversation.id must be a UUID for Claude Code, got ${JSON.stringify(sessionId)}`);
      const env = mergeEnvironment(
        options.baseEnv ?? process.env,
        options.env,
        turn.mcp && { MCP_TOOL_TIMEOUT: String(checkedToolTimeoutMs(turn.mcp)) },
        turn.mcp?.mount.env,
        turn.gate?.env,
      );
      const transcript = claudeTranscriptPath(claudeConfigDir(env), fs.realpath(turn.cwd), sessionId);
      const resuming = turn.conversation?.established === true || fs.exists(transcript);

      const args = ["-p", "--output-format", "stream-json", "--input-format", "stream-json", "--verbose"];
      if (options.includePartialMessages) args.push("--include-partial-messages");
      args.push(resuming ? "--resume" : "--session-id", sessionId);
      if (options.model !== undefined) args.push("--model", options.model);
      const allowedTools = [...(turn.mcp ? mcpArgs(turn.mcp, args) : []), ...(options.allowedTools ?? [])];
      if (allowedTools.length > 0) args.push("--allowedTools", allowedTools.join(","));
      const settings = {
        ...(turn.gate && gateSettings(turn.gate)),
        ...(turn.confinement && claudeConfinementSettings(turn.confinement, turn.cwd)),
      };
      if (Object.keys(settings).length > 0) args.push("--settings", JSON.stringify(settings));
      args.push(...(options.extraArgs ?? []));

      return {
        backend: "claude",
        launch: {
          command,
          args,
          cwd: turn.cwd,
          env,
          stdin: userMessageLine(turn.prompt),
          installHint: options.installHint ?? claudeInstallHint,
        },
        conversationId: sessionId,
        resuming,
        translator: createClaudeTranslator({
          command,
          ...(turn.mcp && { mcpServerName: mcpServerName(turn.mcp) }),
        }),
      };
    },
  };
}

/**
 * Adds the MCP flags to `args`; returns the server's tools as Claude Code names them. The mount's
 * environment (it holds the turn's token) goes into Claude Code's own environment and the config
 * names it as `${NAME}`, which Claude Code expands: argv is readable by every user through `ps`.
 */
function mcpArgs(spec: McpSpec, args: string[]): string[] {
  const name = mcpServerName(spec);
  const { command, args: mountArgs, env } = spec.mount;
  const envByReference = env && Object.fromEntries(Object.keys(env).map((key) => [key, `\${${key}}`]));
  // alwaysLoad: connected before the first request, not in the background (Claude Code 2.1.332's
  // default for --mcp-config servers), so the turn's first request already has the mount's tools.
  const server = {
    type: "stdio",
    command,
    args: mountArgs,
    ...(envByReference && { env: envByReference }),
    alwaysLoad: true,
  };
  args.push("--mcp-config", JSON.stringify({ mcpServers: { [name]: server } }), "--strict-mcp-config");
  if (spec.permissionPromptTool !== undefined) {
    if (!checkedToolNames(spec).includes(spec.permissionPromptTool)) {
      throw new Error(`permissionPromptTool ${spec.permissionPromptTool} is not one of the mount's tools`);
    }
    args.push("--permission-prompt-tool", `mcp__${name}__${spec.permissionPromptTool}`);
  }
  // The prompt tool answers Claude Code, not the model: a call of it by the model is asked about (and refused).
  return checkedToolNames(spec)
    .filter((tool) => tool !== spec.permissionPromptTool)
    .map((tool) => `mcp__${name}__${tool}`);
}

/**
 * The turn's own settings: a `PreToolUse` hook on every tool (`"*"`) that blocks the call when it
 * fails (`onFailure`; without it a failing hook lets the call run), and hooks on even if the user's
 * settings turn them all off (flag settings win over user and project settings). Measured with 2.1.332.
 */
function gateSettings(gate: ToolGateSpec) {
  const hook = {
    type: "command",
    command: gateHookShellCommand(gate),
    timeout: gateHookTimeoutSeconds(gate),
    onFailure: "block",
  };
  // The same program reports each finished call (PostToolUse); it never blocks one.
  const report = { type: "command", command: completionHookShellCommand(gate), timeout: hook.timeout };
  return {
    disableAllHooks: false,
    hooks: {
      PreToolUse: [{ matcher: "*", hooks: [hook] }],
      PostToolUse: [{ matcher: "*", hooks: [report] }],
    },
  };
}

function userMessageLine(prompt: string): string {
  const message = { role: "user", content: [{ type: "text", text: prompt }] };
  return `${JSON.stringify({ type: "user", message })}\n`;
}
