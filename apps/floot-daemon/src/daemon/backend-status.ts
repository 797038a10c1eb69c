import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { claudeInstallHint, codexInstallHint, findExecutable } from "@bridgeworks/backend-adapters";
import type { Backend, FlootBackendStatus } from "@bridgeworks/protocol";
import type { SandboxStatus } from "./sandbox-status.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Runs `<path> --version`; resolves with its first line, or undefined when it fails or takes too long. */
export type VersionProbe = (path: string, env: Env) => Promise<string | undefined>;

const versionTimeoutMs = 15_000;

export const probeVersion: VersionProbe = (path, env) =>
  new Promise((resolve) => {
    execFile(path, ["--version"], { env: { ...env }, timeout: versionTimeoutMs }, (error, stdout) => {
      const line = String(stdout).trim().split("\n")[0]?.trim();
      resolve(error || !line ? undefined : line.slice(0, 200));
    });
  });

interface BackendFacts {
  backend: Backend;
  command: string;
  installHint: string;
  /** API key variables the CLI reads, by name. */
  keyVariables: readonly string[];
  credentialsFile: string;
}

/** The command a backend's turns run: `FLOOT_CLAUDE_COMMAND` / `FLOOT_CODEX_COMMAND`, else its name on PATH. */
export function backendCommandOf(backend: Backend, env: Env): string {
  return (backend === "claude" ? env.FLOOT_CLAUDE_COMMAND : env.FLOOT_CODEX_COMMAND) || backend;
}

export function installHintOf(backend: Backend): string {
  return backend === "claude"
    ? `${claudeInstallHint}, or set FLOOT_CLAUDE_COMMAND to its path`
    : `${codexInstallHint}, or set FLOOT_CODEX_COMMAND to its path`;
}

function factsOf(backend: Backend, env: Env): BackendFacts {
  const home = env.HOME || homedir();
  const command = backendCommandOf(backend, env);
  const installHint = installHintOf(backend);
  if (backend === "claude") {
    return {
      backend,
      command,
      installHint,
      keyVariables: ["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"],
      credentialsFile: join(env.CLAUDE_CONFIG_DIR || join(home, ".claude"), ".credentials.json"),
    };
  }
  return {
    backend,
    command,
    installHint,
    keyVariables: ["OPENAI_API_KEY", "CODEX_API_KEY"],
    credentialsFile: join(env.CODEX_HOME || join(home, ".codex"), "auth.json"),
  };
}

/**
 * Each backend CLI as the daemon's environment finds it (the turns' own lookup: `PATH`, or the
 * `FLOOT_*_COMMAND` override): installed or not, its version, whether it looks signed in (a key
 * variable set, or a credentials file present), and whether its sandbox can run here. Only names and
 * paths are reported, never a value.
 */
export async function describeBackends(
  env: Env,
  cwd: string,
  sandboxStatus: SandboxStatus,
  probe: VersionProbe = probeVersion,
): Promise<FlootBackendStatus[]> {
  const sandboxes = await sandboxStatus();
  return Promise.all(
    (["claude", "codex"] as const).map(async (backend) => {
      const facts = factsOf(backend, env);
      const found = findExecutable(facts.command, env.PATH, cwd);
      const version = found.found ? await probe(found.path, env) : undefined;
      const variable = facts.keyVariables.find((name) => (env[name] ?? "").length > 0);
      const signedIn: FlootBackendStatus["signedIn"] =
        variable !== undefined
          ? { likely: true, via: "env", detail: variable }
          : existsSync(facts.credentialsFile)
            ? { likely: true, via: "credentials_file", detail: facts.credentialsFile }
            : {
                likely: false,
                via: "none",
                detail: `none of ${facts.keyVariables.join(", ")} is set and ${facts.credentialsFile} does not exist`,
              };
      return {
        backend,
        command: facts.command,
        installed: found.found,
        ...(found.found && { path: found.path }),
        ...(version !== undefined && { version }),
        signedIn,
        installHint: facts.installHint,
        sandbox: sandboxes[backend],
      };
    }),
  );
}
