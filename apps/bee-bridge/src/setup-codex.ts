import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { serverName } from "./mcp-server.js";
import type { PlannedFile } from "./setup-claude.js";

export interface CodexSetupInput {
  /** How Codex starts `bee`: the program and the arguments before the subcommand. */
  launcher: { command: string; args: string[] };
  env: Readonly<Record<string, string | undefined>>;
  homeDir: string;
}

/**
 * The variables Codex 0.171 passes on to a stdio MCP server are only those `env_vars` names (and a
 * short list of its own), so bee's own are named here: their values stay in Codex's environment,
 * never in its config file.
 */
export const codexForwardedVariables = [
  "BEE_BOARD",
  "BEE_AGENT",
  "BEE_RUN_DIR",
  "BEE_LOG_LEVEL",
  "BEE_LOG_FILE",
  "BEE_BUSY_TIMEOUT_MS",
  "PGPASSWORD",
  "XDG_STATE_HOME",
  "XDG_RUNTIME_DIR",
];

/** Codex calls a tool for at most this long; bee's waits end within 60 s. */
const toolTimeoutSeconds = 120;

/**
 * `[mcp_servers.bee]` in `$CODEX_HOME/config.toml` (else `~/.codex/config.toml`): the bridge as a
 * stdio server, its tools approved without asking. The rest of the file is kept as it is; a bee
 * table already there (and its sub-tables) is replaced where it stands.
 */
export function planCodexSetup(input: CodexSetupInput): PlannedFile[] {
  const path = join(input.env.CODEX_HOME || join(input.homeDir, ".codex"), "config.toml");
  const before = existsSync(path) ? readFileSync(path, "utf8") : undefined;
  const table = [
    `[mcp_servers.${serverName}]`,
    `command = ${tomlString(input.launcher.command)}`,
    `args = ${tomlArray([...input.launcher.args, "bridge"])}`,
    `env_vars = ${tomlArray(codexForwardedVariables)}`,
    'default_tools_approval_mode = "approve"',
    `tool_timeout_sec = ${toolTimeoutSeconds}`,
  ];
  const after = `${replaceTable(before ?? "", `mcp_servers.${serverName}`, table).trimEnd()}\n`;
  return [{ path, before, after: before === after ? before : after }];
}

/** The file's lines with the table `name` (and its sub-tables) replaced by `table`, else `table` appended. */
function replaceTable(text: string, name: string, table: readonly string[]): string {
  const lines = text === "" ? [] : text.split("\n");
  const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/;
  const ours = (line: string) => {
    const match = header.exec(line);
    return match !== null && (match[1] === name || match[1]!.startsWith(`${name}.`));
  };
  const start = lines.findIndex(ours);
  if (start < 0)
    return [...lines, ...(lines.length > 0 && lines.at(-1) !== "" ? [""] : []), ...table].join("\n");
  let end = start + 1;
  while (end < lines.length && (!header.test(lines[end]!) || ours(lines[end]!))) end++;
  // Keep the blank line that separated our table from the next one.
  while (end > start + 1 && lines[end - 1]!.trim() === "") end--;
  return [...lines.slice(0, start), ...table, ...lines.slice(end)].join("\n");
}

function tomlString(value: string): string {
  return JSON.stringify(value);
}

function tomlArray(values: readonly string[]): string {
  return `[${values.map(tomlString).join(", ")}]`;
}
