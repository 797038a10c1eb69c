import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ControlToken } from "@bridgeworks/protocol";
import { shimRebindFileEnvVar, shimSocketEnvVar, shimTokenEnvVar, shimTokenFileEnvVar } from "./mcp-shim.js";
import { assertSocketPath, McpMountError } from "./mcp-socket-server.js";
import { type WritePrivateFileOptions, writePrivateFileAtomic } from "./private-file.js";

/** How to run the shim: absolute paths of a node executable and of `shim.js`. */
export interface ShimCommand {
  node: string;
  script: string;
}

/** A stdio MCP server entry, as both CLIs take it (`command`, `args`, `env`). */
export interface McpStdioMount {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export interface MintTurnMountOptions {
  /** The current generation's socket (`McpSocketServer.socketPath`). */
  socketPath: string;
  /** The turn's token (`TurnTokenRegistry.issue`). */
  token: string;
  /**
   * Where the caller wrote `token` (0600, in the generation's 0700 dir): the mount then names this
   * file (`FLOOT_MCP_TOKEN_FILE`), which the shim removes once read, instead of carrying the token.
   */
  tokenFile?: string;
  /** Where a daemon that adopts the turn after a restart leaves the shim new credentials (`runShim`). */
  rebindFile?: string;
  /** Defaults to this node and this package's `dist/shim.js` (`defaultShimCommand()`). */
  shimCommand?: ShimCommand;
}

/** This package's compiled shim: `<package>/dist/shim.js`, whether this module runs from src or dist. */
export function defaultShimScriptPath(): string {
  const packageRoot = dirname(dirname(fileURLToPath(import.meta.url)));
  return join(packageRoot, "dist", "shim.js");
}

/** This package's compiled gate hook: `<package>/dist/gate-hook.js` (see `runToolGateHook`). */
export function defaultGateHookScriptPath(): string {
  const packageRoot = dirname(dirname(fileURLToPath(import.meta.url)));
  return join(packageRoot, "dist", "gate-hook.js");
}

export function defaultShimCommand(): ShimCommand {
  return { node: process.execPath, script: defaultShimScriptPath() };
}

/**
 * The MCP server entry for one turn: run the shim with only the socket path and the token, both in the
 * environment (argv is readable by every user through `ps`). `NODE_OPTIONS` is blanked because Claude
 * Code merges its own environment into a stdio server's, and a `--require` there could write to the
 * shim's stdout; the shim itself reads the two variables and drops the rest of its environment.
 */
export function mintTurnMount(options: MintTurnMountOptions): McpStdioMount {
  assertSocketPath(options.socketPath);
  if (!ControlToken.safeParse(options.token).success) {
    throw new McpMountError("invalid_token", "token must be 64 lowercase hex characters (see mintToken)");
  }
  const shim = options.shimCommand ?? defaultShimCommand();
  for (const [field, path] of Object.entries(shim)) {
    if (!isAbsolute(path)) {
      throw new McpMountError(
        "invalid_shim_command",
        `shimCommand.${field} must be an absolute path, got ${JSON.stringify(path)}`,
      );
    }
  }
  return {
    command: shim.node,
    args: [shim.script],
    env: {
      [shimSocketEnvVar]: options.socketPath,
      ...(options.tokenFile !== undefined
        ? { [shimTokenFileEnvVar]: options.tokenFile }
        : { [shimTokenEnvVar]: options.token }),
      ...(options.rebindFile !== undefined && { [shimRebindFileEnvVar]: options.rebindFile }),
      NODE_OPTIONS: "",
    },
  };
}

/** The `--mcp-config` document for Claude Code: every mount as a `stdio` server under its name. */
export interface ClaudeMcpConfig {
  mcpServers: Record<string, { type: "stdio"; alwaysLoad: true } & McpStdioMount>;
}

export function claudeMcpConfig(mounts: Record<string, McpStdioMount>): ClaudeMcpConfig {
  const mcpServers: ClaudeMcpConfig["mcpServers"] = {};
  for (const [name, mount] of Object.entries(mounts)) {
    mcpServers[name] = {
      type: "stdio",
      command: mount.command,
      args: [...mount.args],
      env: { ...mount.env },
      // Connected before the first request, not in the background (Claude Code 2.1.332's default).
      alwaysLoad: true,
    };
  }
  return { mcpServers };
}

export type WriteMcpConfigFileOptions = WritePrivateFileOptions;

/**
 * Writes an MCP config (it holds a turn token) to `path` atomically with mode 0600, for
 * `claude --mcp-config <path>`: an inline JSON argument would put the token in claude's argv.
 * Put it in the generation dir (0700), so it goes away with the generation.
 */
export async function writeMcpConfigFile(
  path: string,
  config: ClaudeMcpConfig,
  options: WriteMcpConfigFileOptions = {},
): Promise<void> {
  await writePrivateFileAtomic(path, `${JSON.stringify(config)}\n`, options);
}

/** How to hand a mount to `codex exec`: `-c` overrides for argv, and variables for codex's own environment. */
export interface CodexMcpOverrides {
  /** `-c mcp_servers.<name>.command=…`, `.args=…`, `.env_vars=[…]`, as argv pairs. */
  args: string[];
  /** Set these in codex's environment (never argv); `env_vars` forwards exactly these to the shim. */
  env: Record<string, string>;
}

/**
 * Codex passes a stdio server only its own short list of variables plus the ones named in `env_vars`
 * (measured with 0.171: without `env_vars` the shim gets no token and the tool call fails). So the
 * token travels in codex's environment and is named, not written, in argv. Approval and timeout keys
 * (`default_tools_approval_mode`, `tool_timeout_sec`) are the adapter's to add.
 */
export function codexMcpOverrides(name: string, mount: McpStdioMount): CodexMcpOverrides {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) {
    throw new McpMountError(
      "invalid_server_name",
      `MCP server name must match [A-Za-z0-9_-]+, got ${JSON.stringify(name)}`,
    );
  }
  // Values go through codex's environment; only empty ones (blanked knobs such as NODE_OPTIONS,
  // nothing secret) are written inline.
  const forwarded = Object.entries(mount.env).filter(([, value]) => value !== "");
  const blanked = Object.entries(mount.env).filter(([, value]) => value === "");
  // JSON strings and arrays of strings are valid TOML values; so are quoted keys.
  const args = [
    "-c",
    `mcp_servers.${name}.command=${JSON.stringify(mount.command)}`,
    "-c",
    `mcp_servers.${name}.args=${JSON.stringify(mount.args)}`,
    "-c",
    `mcp_servers.${name}.env_vars=${JSON.stringify(forwarded.map(([key]) => key))}`,
  ];
  if (blanked.length > 0) {
    const table = blanked.map(([key]) => `${JSON.stringify(key)}=""`).join(",");
    args.push("-c", `mcp_servers.${name}.env={${table}}`);
  }
  return { args, env: Object.fromEntries(forwarded) };
}
