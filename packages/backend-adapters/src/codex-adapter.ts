import type { BackendAdapter, McpSpec, PreparedTurn, ToolGateSpec, TurnSpec } from "./backend-adapter.js";
import { createCodexTranslator } from "./codex-translator.js";
import { codexConfinementOverrides } from "./confinement.js";
import { type EnvironmentSource, mergeEnvironment } from "./environment.js";
import { checkedToolNames, checkedToolTimeoutMs, mcpServerName } from "./mcp-names.js";
import { tomlInlineTable, tomlString, tomlStringArray } from "./toml.js";
import { completionHookShellCommand, gateHookShellCommand, gateHookTimeoutSeconds } from "./tool-gate.js";

export interface CodexAdapterOptions {
  /** Default `codex` (looked up on the environment's PATH). */
  command?: string;
  /** Default `process.env`: the user's own `CODEX_HOME`, configuration and login apply. */
  baseEnv?: EnvironmentSource;
  /** The session's additions to the environment. */
  env?: Readonly<Record<string, string>>;
  model?: string;
  /** The session's `-c key=value` overrides; each value is TOML. */
  configOverrides?: readonly string[];
  /** Default true: a workspace need not be a git repository. */
  skipGitRepoCheck?: boolean;
  /** Appended to the argv before the prompt marker, as given. */
  extraArgs?: readonly string[];
  /** Said when the command cannot be found or run; default: how to install Codex with npm. */
  installHint?: string;
}

/** Codex's tools that only read (0.171, as its hooks name them): calling them is no effect. */
export const codexEffectFreeTools: readonly string[] = ["view_image", "get_goal"];
export const codexInstallHint = "Install Codex with: npm install -g @openai/codex";

const threadIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/**
 * One `codex exec --json` per turn; later turns `codex exec resume <thread_id>`. The prompt goes to
 * stdin (`-`), so exec neither waits for nor appends extra stdin and argv length is no limit. The
 * thread id is unknown until `thread.started`, the first line, which the translator reports as
 * `backend.started`. A `gate` becomes a `PreToolUse` hook in `-c` overrides (the turn's own
 * configuration layer, never the user's files), and a `confinement` a permission profile there too.
 */
export function createCodexAdapter(options: CodexAdapterOptions = {}): BackendAdapter {
  const command = options.command ?? "codex";

  return {
    backend: "codex",
    effectFreeTools: codexEffectFreeTools,
    prepareTurn(turn: TurnSpec): PreparedTurn {
      const threadId = turn.conversation?.id;
      if (threadId !== undefined && !threadIdPattern.test(threadId))
        throw new Error(`conversation.id is not a Codex thread id: ${JSON.stringify(threadId)}`);

      const args = threadId === undefined ? ["exec", "--json"] : ["exec", "resume", "--json"];
      if (options.skipGitRepoCheck ?? true) args.push("--skip-git-repo-check");
      if (options.model !== undefined) args.push("-m", options.model);
      for (const override of [
        ...(options.configOverrides ?? []),
        ...(turn.mcp ? mcpOverrides(turn.mcp) : []),
        ...(turn.gate ? gateOverrides(turn.gate) : []),
        ...(turn.confinement ? codexConfinementOverrides(turn.confinement, turn.cwd) : []),
      ])
        args.push("-c", override);
      // Hooks on even if the user's config turns them off; a hook given here has no persisted trust
      // (trusting it would write to the user's files), so this invocation runs it without.
      if (turn.gate) args.push("--enable", "hooks", "--dangerously-bypass-hook-trust");
      args.push(...(options.extraArgs ?? []));
      if (threadId !== undefined) args.push(threadId);
      args.push("-");

      return {
        backend: "codex",
        launch: {
          command,
          args,
          cwd: turn.cwd,
          env: mergeEnvironment(
            options.baseEnv ?? process.env,
            options.env,
            turn.mcp && forwardedEnv(turn.mcp),
            turn.gate?.env,
          ),
          stdin: turn.prompt,
          installHint: options.installHint ?? codexInstallHint,
        },
        conversationId: threadId,
        resuming: threadId !== undefined,
        translator: createCodexTranslator({ command }),
      };
    },
  };
}

/**
 * The mount as `mcp_servers.<name>.*` overrides: approved without asking, and a long call timeout.
 * Its variables (the turn's token among them) go into codex's own environment and are only named
 * here (`env_vars`): codex passes a stdio server those and a short list of its own (measured, 0.171),
 * and argv is readable by every user. Only blanked ones (`NODE_OPTIONS=""`) are written inline.
 */
function mcpOverrides(spec: McpSpec): string[] {
  const key = `mcp_servers.${mcpServerName(spec)}`;
  const { command, args, env = {} } = spec.mount;
  const overrides = [`${key}.command=${tomlString(command)}`, `${key}.args=${tomlStringArray(args)}`];
  const forwarded = Object.keys(forwardedEnv(spec));
  if (forwarded.length > 0) overrides.push(`${key}.env_vars=${tomlStringArray(forwarded)}`);
  const blanked = Object.fromEntries(Object.entries(env).filter(([, value]) => value === ""));
  if (Object.keys(blanked).length > 0) overrides.push(`${key}.env=${tomlInlineTable(blanked)}`);
  overrides.push(
    `${key}.enabled_tools=${tomlStringArray(checkedToolNames(spec))}`,
    `${key}.default_tools_approval_mode="approve"`,
    `${key}.tool_timeout_sec=${Math.ceil(checkedToolTimeoutMs(spec) / 1000)}`,
  );
  return overrides;
}

function forwardedEnv(spec: McpSpec): Record<string, string> {
  return Object.fromEntries(Object.entries(spec.mount.env ?? {}).filter(([, value]) => value !== ""));
}

/**
 * A `PreToolUse` hook without a matcher (every tool) as a `-c` override. Codex names its shell tool
 * `Bash` in hook input; `apply_patch`, MCP tools and the rest by their own names (measured, 0.171).
 */
function gateOverrides(gate: ToolGateSpec): string[] {
  const hook = `{ type = "command", command = ${tomlString(gateHookShellCommand(gate))}, timeout = ${gateHookTimeoutSeconds(gate)} }`;
  // The same program reports each finished call (PostToolUse).
  const report = `{ type = "command", command = ${tomlString(completionHookShellCommand(gate))}, timeout = ${gateHookTimeoutSeconds(gate)} }`;
  return [`hooks.PreToolUse=[{ hooks = [${hook}] }]`, `hooks.PostToolUse=[{ hooks = [${report}] }]`];
}
