import type { BackendAdapter, McpSpec, PreparedTurn, TurnSpec } from "./backend-adapter.js";
import { createCodexTranslator } from "./codex-translator.js";
import { type EnvironmentSource, mergeEnvironment } from "./environment.js";
import { checkedToolNames, checkedToolTimeoutMs, mcpServerName } from "./mcp-names.js";
import { tomlInlineTable, tomlString, tomlStringArray } from "./toml.js";

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
}

const threadIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/**
 * One `codex exec --json` per turn; later turns `codex exec resume <thread_id>`. The prompt goes to
 * stdin (`-`), so exec neither waits for nor appends extra stdin and argv length is no limit. The
 * thread id is unknown until `thread.started`, the first line, which the translator reports as
 * `backend.started`.
 */
export function createCodexAdapter(options: CodexAdapterOptions = {}): BackendAdapter {
  const command = options.command ?? "codex";

  return {
    backend: "codex",
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
      ])
        args.push("-c", override);
      args.push(...(options.extraArgs ?? []));
      if (threadId !== undefined) args.push(threadId);
      args.push("-");

      return {
        backend: "codex",
        launch: {
          command,
          args,
          cwd: turn.cwd,
          env: mergeEnvironment(options.baseEnv ?? process.env, options.env),
          stdin: turn.prompt,
        },
        conversationId: threadId,
        resuming: threadId !== undefined,
        translator: createCodexTranslator({ command }),
      };
    },
  };
}

/** The mount as `mcp_servers.<name>.*` overrides: approved without asking, and a long call timeout. */
function mcpOverrides(spec: McpSpec): string[] {
  const key = `mcp_servers.${mcpServerName(spec)}`;
  const { command, args, env } = spec.mount;
  const overrides = [`${key}.command=${tomlString(command)}`, `${key}.args=${tomlStringArray(args)}`];
  if (env !== undefined && Object.keys(env).length > 0) overrides.push(`${key}.env=${tomlInlineTable(env)}`);
  overrides.push(
    `${key}.enabled_tools=${tomlStringArray(checkedToolNames(spec))}`,
    `${key}.default_tools_approval_mode="approve"`,
    `${key}.tool_timeout_sec=${Math.ceil(checkedToolTimeoutMs(spec) / 1000)}`,
  );
  return overrides;
}
