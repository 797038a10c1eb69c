import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { UsageError } from "@bridgeworks/cli";
import { serverName } from "./mcp-server.js";
import { sessionEventToolName } from "./tools.js";

export type SetupScope = "user" | "project";

export interface SetupInput {
  scope: SetupScope;
  dryRun: boolean;
  /** How Claude Code starts `bee`: the program and the arguments before the subcommand. */
  launcher: { command: string; args: string[] };
  env: Readonly<Record<string, string | undefined>>;
  homeDir: string;
  cwd: string;
  /** Extra env for the server entry, e.g. `BEE_CHANNEL=1`. */
  serverEnv: Record<string, string>;
  /** Put every permission prompt to the board (`bee hook permission-request`). */
  escalate?: EscalationPolicy | undefined;
}

export interface EscalationPolicy {
  /** `human:<name>` or a lead agent's name. */
  to: string;
  /** Empty: the hook's default (the addressee, and people for an agent). */
  deciders: string[];
  timeoutSeconds: number;
}

export interface PlannedFile {
  path: string;
  before: string | undefined;
  after: string;
}

type Json = Record<string, unknown>;

export const deniedSessionEventTool = `mcp__${serverName}__${sessionEventToolName}`;

/**
 * Where Claude Code 2.1.332 reads each piece. User scope: servers in `.claude.json` and hooks in
 * `settings.json`, both under `CLAUDE_CONFIG_DIR` when set (else `~/.claude.json` and `~/.claude/`).
 * Project scope: servers in `.mcp.json`, hooks in `.claude/settings.json`, and the approval of the
 * `.mcp.json` server in `.claude/settings.local.json` (a project's shared settings cannot approve it).
 */
export function planClaudeSetup(input: SetupInput): PlannedFile[] {
  const configDir = input.env.CLAUDE_CONFIG_DIR;
  const files =
    input.scope === "user"
      ? {
          servers: configDir ? join(configDir, ".claude.json") : join(input.homeDir, ".claude.json"),
          settings: join(configDir || join(input.homeDir, ".claude"), "settings.json"),
          approval: undefined,
        }
      : {
          servers: join(input.cwd, ".mcp.json"),
          settings: join(input.cwd, ".claude", "settings.json"),
          approval: join(input.cwd, ".claude", "settings.local.json"),
        };

  const planned: PlannedFile[] = [];
  const plan = (path: string, change: (json: Json) => void) => {
    const before = existsSync(path) ? readFileSync(path, "utf8") : undefined;
    const json = parseJsonObject(before, path);
    change(json);
    const after = `${JSON.stringify(json, null, 2)}\n`;
    planned.push({ path, before, after: before !== undefined && sameJson(before, after) ? before : after });
  };

  plan(files.servers, (json) => {
    const servers = objectAt(json, "mcpServers", files.servers);
    servers[serverName] = {
      type: "stdio",
      command: input.launcher.command,
      args: [...input.launcher.args, "bridge"],
      env: input.serverEnv,
      // Claude Code 2.1.332 connects other servers in the background ("running fully async
      // (nonblocking)"): under load its first request went out without bee's tools. An alwaysLoad
      // server is connected before the first request (bounded by MCP_CONNECT_TIMEOUT_MS, 5 s).
      alwaysLoad: true,
    };
  });
  plan(files.settings, (json) => {
    const permissions = objectAt(json, "permissions", files.settings);
    const deny = arrayAt(permissions, "deny", `${files.settings} permissions`);
    if (!deny.includes(deniedSessionEventTool)) deny.push(deniedSessionEventTool);
    const hooks = objectAt(json, "hooks", files.settings);
    const sessionStart = arrayAt(hooks, "SessionStart", `${files.settings} hooks`);
    upsertHook(sessionStart, "clear", isBeeMcpToolHook, {
      type: "mcp_tool",
      server: serverName,
      tool: sessionEventToolName,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code fills ${...} from the hook input.
      input: { session_id: "${session_id}", source: "${source}" },
      timeout: 10,
    });
    upsertHook(sessionStart, "clear", isBeeCommandHook, {
      type: "command",
      command: [input.launcher.command, ...input.launcher.args, "hook", "session-start"]
        .map(shellQuote)
        .join(" "),
      timeout: 10,
    });
    if (input.escalate !== undefined) {
      const { to, deciders, timeoutSeconds } = input.escalate;
      const permissionRequest = arrayAt(hooks, "PermissionRequest", `${files.settings} hooks`);
      // No matcher: every tool's prompt. Claude Code kills a hook at its timeout; the hook denies first.
      upsertHook(permissionRequest, undefined, isBeePermissionHook, {
        type: "command",
        command: [
          input.launcher.command,
          ...input.launcher.args,
          "hook",
          "permission-request",
          "--to",
          to,
          ...deciders.flatMap((decider) => ["--decider", decider]),
          "--timeout",
          String(timeoutSeconds),
        ]
          .map(shellQuote)
          .join(" "),
        timeout: timeoutSeconds + 30,
        statusMessage: `Asking ${to} on the bee board`,
      });
    }
  });
  if (files.approval) {
    const approval = files.approval;
    plan(approval, (json) => {
      const enabled = arrayAt(json, "enabledMcpjsonServers", approval);
      if (!enabled.includes(serverName)) enabled.push(serverName);
      // An earlier "continue without" in Claude's dialog wins over the approval, silently: asked to set
      // bee up, drop that refusal.
      const disabled = json.disabledMcpjsonServers;
      if (disabled === undefined) return;
      if (!Array.isArray(disabled))
        throw new UsageError(approval, `"disabledMcpjsonServers" must be an array`);
      const kept = disabled.filter((name) => name !== serverName);
      if (kept.length === 0) delete json.disabledMcpjsonServers;
      else json.disabledMcpjsonServers = kept;
    });
  }
  return planned;
}

export function writePlannedFiles(planned: readonly PlannedFile[]): void {
  for (const file of planned) {
    if (file.before === file.after) continue;
    mkdirSync(dirname(file.path), { recursive: true, mode: 0o700 });
    const temp = `${file.path}.bee-${process.pid}.tmp`;
    writeFileSync(temp, file.after, { mode: 0o600 });
    renameSync(temp, file.path);
  }
}

/**
 * Our hooks live in a group of their own (with `matcher`, or none); others' groups are left alone.
 * A hook of ours already anywhere is replaced where it is.
 */
function upsertHook(
  groups: unknown[],
  matcher: string | undefined,
  isOurs: (hook: unknown) => boolean,
  hook: Json,
): void {
  for (const group of groups) {
    if (!isObject(group) || !Array.isArray(group.hooks)) continue;
    const index = group.hooks.findIndex(isOurs);
    if (index >= 0) {
      group.hooks[index] = hook;
      return;
    }
  }
  const ours = groups.find(
    (group) =>
      isObject(group) &&
      group.matcher === matcher &&
      Array.isArray(group.hooks) &&
      group.hooks.every(
        (existing) =>
          isBeeMcpToolHook(existing) || isBeeCommandHook(existing) || isBeePermissionHook(existing),
      ),
  );
  if (isObject(ours) && Array.isArray(ours.hooks)) ours.hooks.push(hook);
  else groups.push(matcher === undefined ? { hooks: [hook] } : { matcher, hooks: [hook] });
}

function isBeePermissionHook(hook: unknown): boolean {
  return (
    isObject(hook) &&
    hook.type === "command" &&
    typeof hook.command === "string" &&
    /\bhook permission-request\b/.test(hook.command)
  );
}

function isBeeMcpToolHook(hook: unknown): boolean {
  return (
    isObject(hook) &&
    hook.type === "mcp_tool" &&
    hook.server === serverName &&
    hook.tool === sessionEventToolName
  );
}

function isBeeCommandHook(hook: unknown): boolean {
  return (
    isObject(hook) &&
    hook.type === "command" &&
    typeof hook.command === "string" &&
    /\bhook session-start$/.test(hook.command)
  );
}

function parseJsonObject(text: string | undefined, path: string): Json {
  if (text === undefined || text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      path,
      `is not valid JSON (${(error as Error).message}); fix or move it, then run again`,
    );
  }
  if (!isObject(value)) throw new UsageError(path, "must hold a JSON object");
  return value;
}

function objectAt(json: Json, key: string, where: string): Json {
  const value = json[key];
  if (value === undefined) {
    const created: Json = {};
    json[key] = created;
    return created;
  }
  if (!isObject(value)) throw new UsageError(where, `"${key}" must be an object`);
  return value;
}

function arrayAt(json: Json, key: string, where: string): unknown[] {
  const value = json[key];
  if (value === undefined) {
    const created: unknown[] = [];
    json[key] = created;
    return created;
  }
  if (!Array.isArray(value)) throw new UsageError(where, `"${key}" must be an array`);
  return value;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sameJson(a: string, b: string): boolean {
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return false;
  }
}

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A line diff of each planned change, for `--dry-run`. */
export function describePlan(planned: readonly PlannedFile[]): string {
  const out: string[] = [];
  for (const file of planned) {
    if (file.before === file.after) {
      out.push(`unchanged ${file.path}`);
      continue;
    }
    out.push(`--- ${file.before === undefined ? "/dev/null" : file.path}`, `+++ ${file.path}`);
    out.push(...lineDiff(file.before?.split("\n") ?? [], file.after.split("\n")));
  }
  return `${out.join("\n")}\n`;
}

function lineDiff(before: string[], after: string[]): string[] {
  const lengths: number[][] = Array.from({ length: before.length + 1 }, () =>
    new Array<number>(after.length + 1).fill(0),
  );
  for (let i = before.length - 1; i >= 0; i--) {
    for (let j = after.length - 1; j >= 0; j--) {
      lengths[i]![j] =
        before[i] === after[j]
          ? lengths[i + 1]![j + 1]! + 1
          : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
    }
  }
  const lines: string[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    if (i < before.length && j < after.length && before[i] === after[j]) {
      lines.push(` ${before[i]}`);
      i++;
      j++;
    } else if (j < after.length && (i >= before.length || lengths[i]![j + 1]! >= lengths[i + 1]![j]!)) {
      lines.push(`+${after[j]}`);
      j++;
    } else {
      lines.push(`-${before[i]}`);
      i++;
    }
  }
  return lines;
}
