import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RealClientName, resolveRealClient } from "./clients.js";
import { ProcessTracker, type TrackedProcess } from "./processes.js";

export interface IsolatedEnvironmentOptions {
  /** Base URL of the model double; every client is pointed at it. */
  modelUrl?: string;
  /** Model id codex and pi ask the double for. */
  model?: string;
  /** Extra variables, applied last. */
  env?: Record<string, string>;
}

export interface IsolatedEnvironment {
  root: string;
  home: string;
  /** A working folder for the agent, inside `root`. */
  workspace: string;
  claudeConfigDir: string;
  codexHome: string;
  piAgentDir: string;
  /** Holds `claude`, `codex` and `pi` links to the pinned binaries; first on PATH. */
  binDir: string;
  env: Record<string, string>;
  processes: ProcessTracker;
  /** Starts `command` (a real client's name or any path) inside the environment, tracked for cleanup. */
  spawn(
    command: RealClientName | string,
    args: readonly string[],
    options?: SpawnInEnvironment,
  ): TrackedProcess;
  /** Ends every process it started, by process group, then removes `root`. */
  dispose(): Promise<void>;
}

export interface SpawnInEnvironment {
  cwd?: string;
  env?: Record<string, string>;
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  input?: string;
  /** Keep stdin open (for protocols spoken over it). */
  keepStdinOpen?: boolean;
}

export const DOUBLE_API_KEY = "sk-ant-bridgeworks-double";
const realClientNames: readonly RealClientName[] = ["claude", "codex", "pi"];

/**
 * A temp HOME with its own Claude Code, Codex and Pi config dirs pointed at the model double.
 * Nothing of the caller's environment leaks in but what a process needs to start (PATH, locale).
 */
export function createIsolatedEnvironment(options: IsolatedEnvironmentOptions = {}): IsolatedEnvironment {
  const root = mkdtempSync(join(tmpdir(), "bridgeworks-e2e-"));
  const dirs = {
    home: join(root, "home"),
    workspace: join(root, "workspace"),
    claudeConfigDir: join(root, "home/.claude"),
    codexHome: join(root, "home/.codex"),
    piAgentDir: join(root, "home/.pi/agent"),
    binDir: join(root, "bin"),
    tmp: join(root, "tmp"),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const name of realClientNames)
    symlinkSync(resolveRealClient(name).executable, join(dirs.binDir, name));

  const model = options.model ?? "claude-sonnet-4-5";
  const env: Record<string, string> = {
    PATH: `${dirs.binDir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: dirs.home,
    TMPDIR: dirs.tmp,
    LANG: "C.UTF-8",
    XDG_CONFIG_HOME: join(dirs.home, ".config"),
    XDG_STATE_HOME: join(dirs.home, ".local/state"),
    XDG_DATA_HOME: join(dirs.home, ".local/share"),
    XDG_CACHE_HOME: join(dirs.home, ".cache"),
    CLAUDE_CONFIG_DIR: dirs.claudeConfigDir,
    CODEX_HOME: dirs.codexHome,
    PI_CODING_AGENT_DIR: dirs.piAgentDir,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    ANTHROPIC_API_KEY: DOUBLE_API_KEY,
    DOUBLE_API_KEY,
  };
  if (options.modelUrl) {
    env.ANTHROPIC_BASE_URL = options.modelUrl;
    writeCodexConfig(dirs.codexHome, options.modelUrl, model);
    writePiModels(dirs.piAgentDir, options.modelUrl, model);
  }
  Object.assign(env, options.env);

  const processes = new ProcessTracker();
  return {
    root,
    ...dirs,
    env,
    processes,
    spawn(command, args, spawnOptions = {}) {
      const tracked = processes.spawn(command, args, {
        cwd: spawnOptions.cwd ?? dirs.workspace,
        env: { ...env, ...spawnOptions.env },
        stdio: ["pipe", "pipe", "pipe"],
      });
      if (spawnOptions.input !== undefined) tracked.child.stdin?.end(spawnOptions.input);
      else if (!spawnOptions.keepStdinOpen) tracked.child.stdin?.end();
      return tracked;
    },
    async dispose() {
      await processes.endAll();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Codex reads `{base_url}/responses`; the key comes from `env_key`. No retries: a failure must show. */
export function writeCodexConfig(codexHome: string, modelUrl: string, model: string): void {
  const toml = [
    `model = ${JSON.stringify(model)}`,
    'model_provider = "double"',
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    "",
    "[model_providers.double]",
    'name = "Model double"',
    `base_url = ${JSON.stringify(`${modelUrl}/v1`)}`,
    'wire_api = "responses"',
    'env_key = "DOUBLE_API_KEY"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
    "",
  ].join("\n");
  writeFileSync(join(codexHome, "config.toml"), toml, { mode: 0o600 });
}

/** Pi's provider `double` speaks the Anthropic Messages API to the double. */
export function writePiModels(piAgentDir: string, modelUrl: string, model: string): void {
  const models = {
    providers: {
      double: {
        baseUrl: modelUrl,
        api: "anthropic-messages",
        apiKey: "DOUBLE_API_KEY",
        models: [{ id: model }],
      },
    },
  };
  writeFileSync(join(piAgentDir, "models.json"), `${JSON.stringify(models, null, 2)}\n`, { mode: 0o600 });
}
