import { tomlInlineTable, tomlString } from "./toml.js";

/**
 * The CLI's own OS sandbox around every command of a turn (Claude Code: bubblewrap on Linux, Seatbelt on
 * macOS; Codex: its permission profile, bubblewrap and seccomp on Linux), configured in the turn's own
 * arguments, never the user's files. Paths are absolute.
 */
export interface ConfinementSpec {
  /** What no command may read or write, nor a file tool touch: the daemon's state, its runtime dir. */
  hidden: readonly string[];
  /**
   * Files inside `hidden` that file tools must not touch, listed one by one where the workspace lies
   * inside a hidden tree (a file tool's deny rule always wins over an allow: Claude Code 2.1.332, measured).
   */
  hiddenFromTools: readonly string[];
  /** Dirs inside `hidden` a command may read and write: the workspace's tree and the turn's own files. */
  carvedOut: readonly string[];
  /** Where commands may write besides the workspace (the cwd). */
  writable: readonly string[];
  /** Hosts sandboxed commands may reach (`host`, `*.host`, `host:port`); empty: none. */
  allowedHosts: readonly string[];
}

/**
 * Claude Code's `--settings` for a confined turn (2.1.332, measured): `sandbox.filesystem.denyRead` puts a
 * tmpfs over each hidden tree and `allowRead`/`allowWrite` bind the carve-outs back in; unix sockets and
 * other processes are out of reach (seccomp, its own pid namespace); `failIfUnavailable` refuses to start
 * rather than run a command unconfined, and `allowUnsandboxedCommands: false` takes away the model's
 * `dangerouslyDisableSandbox`. The sandbox does not cover Read, Edit and the other file tools, whose own
 * deny rules (`Read(//path/**)`; `Edit` covers Write) stand in for it; WebFetch runs in Claude Code's own
 * process, so it is denied when no host is allowed.
 */
export function claudeConfinementSettings(spec: ConfinementSpec, cwd: string) {
  const toolPaths = [...spec.hiddenFromTools];
  const deny = toolPaths.flatMap((path) => [`Read(/${ruleGlob(path)})`, `Edit(/${ruleGlob(path)})`]);
  if (spec.allowedHosts.length === 0) deny.push("WebFetch");
  return {
    sandbox: {
      enabled: true,
      failIfUnavailable: true,
      allowUnsandboxedCommands: false,
      filesystem: {
        denyRead: [...spec.hidden],
        allowRead: [...spec.carvedOut],
        allowWrite: unique([cwd, ...spec.carvedOut, ...spec.writable]),
      },
      network: { allowedDomains: [...spec.allowedHosts] },
    },
    permissions: { deny },
  };
}

/** A path as a rule names it: a dir covers what is under it. */
function ruleGlob(path: string): string {
  return path.endsWith("/") ? `${path}**` : path;
}

export const codexPermissionProfile = "floot";

/**
 * Codex's `-c` overrides for a confined turn (0.171, measured): a permission profile that reads the whole
 * machine but the hidden trees (`none`), writes the workspace and the carve-outs; a `read` carve-out inside
 * a `none` tree is not honoured (measured), so carve-outs are `write`. No `/tmp` and no `$TMPDIR` unless
 * listed. Network only to the allowed hosts.
 */
export function codexConfinementOverrides(spec: ConfinementSpec, cwd: string): string[] {
  const filesystem: Record<string, string> = { ":root": "read" };
  for (const path of spec.hidden) filesystem[path] = "none";
  for (const path of unique([cwd, ...spec.carvedOut, ...spec.writable])) filesystem[path] = "write";
  const key = `permissions.${codexPermissionProfile}`;
  const overrides = [
    `default_permissions=${tomlString(codexPermissionProfile)}`,
    `${key}.filesystem=${tomlInlineTable(filesystem)}`,
  ];
  // Without a network entry the profile's commands reach nothing (measured).
  if (spec.allowedHosts.length > 0) {
    const domains = tomlInlineTable(Object.fromEntries(spec.allowedHosts.map((host) => [host, "allow"])));
    overrides.push(`${key}.network={ enabled = true, domains = ${domains} }`);
  }
  return overrides;
}

/**
 * Codex settings a confined session may not override: they would replace the profile above, and
 * `sandbox_mode` and `default_permissions` cannot both be set (codex 0.171's own error).
 */
export const codexConfinementKeys: readonly string[] = [
  "sandbox_mode",
  "default_permissions",
  "permissions",
  "sandbox_workspace_write",
  "permission_profile",
];

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}
