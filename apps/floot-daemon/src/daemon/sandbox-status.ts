import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { findExecutable } from "@bridgeworks/backend-adapters";
import type { Backend, SandboxAvailability } from "@bridgeworks/protocol";

type Env = Readonly<Record<string, string | undefined>>;

/** Runs a program; resolves with its exit code (or -1 when it could not run) and its stderr. */
export type RunProgram = (
  path: string,
  args: readonly string[],
  env: Env,
) => Promise<{ code: number; stderr: string }>;

export interface SandboxProbeOptions {
  platform?: NodeJS.Platform;
  run?: RunProgram;
  /** Finds a program on the environment's PATH. */
  which?: (name: string, env: Env) => string | undefined;
  exists?: (path: string) => boolean;
}

// What each CLI's sandbox needs, measured on Debian 12 (kernel 6.18, bubblewrap 0.8.0, socat 1.7.4):
// Claude Code 2.1.332 refuses to start a sandboxed turn without `bwrap` ("bubblewrap (bwrap) not
// installed") or `socat` ("socat not installed") on its PATH (its network proxy runs through socat);
// Codex 0.171 brings its own bubblewrap (`codex-resources/bwrap`, used when none is on PATH: measured
// with /usr/bin/bwrap moved away). Both need unprivileged user namespaces, which the trial below uses.
// macOS: both use Seatbelt (`/usr/bin/sandbox-exec`); not measured here.

const trialArgs = [
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--unshare-user",
  "--unshare-pid",
  "--die-with-parent",
  "true",
];

/**
 * Whether each backend's sandbox can confine a session's commands on this machine, as its turns would
 * run (the daemon's PATH). Cached for `ttlMs`, so creating sessions does not try it every time.
 */
export function createSandboxProbe(env: Env, options: SandboxProbeOptions = {}, ttlMs = 30_000) {
  const platform = options.platform ?? process.platform;
  const run = options.run ?? runProgram;
  const which =
    options.which ??
    ((name, environment) => {
      const found = findExecutable(name, environment.PATH, "/");
      return found.found ? found.path : undefined;
    });
  const exists = options.exists ?? existsSync;
  let cached: { at: number; result: Promise<Record<Backend, SandboxAvailability>> } | undefined;

  async function probe(): Promise<Record<Backend, SandboxAvailability>> {
    if (platform === "darwin") {
      const seatbelt = exists("/usr/bin/sandbox-exec");
      const status: SandboxAvailability = seatbelt
        ? { available: true, mechanism: "Seatbelt (sandbox-exec)" }
        : {
            available: false,
            mechanism: "Seatbelt (sandbox-exec)",
            problem: "/usr/bin/sandbox-exec is missing",
          };
      return { claude: status, codex: status };
    }
    if (platform !== "linux") {
      const status: SandboxAvailability = {
        available: false,
        mechanism: "none",
        problem: `no sandbox for ${platform}: Claude Code and Codex confine commands on Linux and macOS only`,
      };
      return { claude: status, codex: status };
    }
    const bwrap = which("bwrap", env);
    const socat = which("socat", env);
    const namespaces = bwrap === undefined ? undefined : await run(bwrap, trialArgs, env);
    const namespaceProblem =
      namespaces === undefined || namespaces.code === 0
        ? undefined
        : `bubblewrap cannot make a user namespace here (${namespaces.stderr.trim().split("\n")[0] || `exit ${namespaces.code}`}); allow unprivileged user namespaces (kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap on Ubuntu)`;
    const missing = [bwrap === undefined && "bubblewrap (bwrap)", socat === undefined && "socat"].filter(
      (name): name is string => name !== false,
    );
    const claude: SandboxAvailability =
      missing.length > 0
        ? {
            available: false,
            mechanism: "bubblewrap and socat",
            problem: `Claude Code's sandbox needs ${missing.join(" and ")} on the daemon's PATH: install them (Debian/Ubuntu: apt install bubblewrap socat)`,
          }
        : namespaceProblem !== undefined
          ? { available: false, mechanism: "bubblewrap and socat", problem: namespaceProblem }
          : { available: true, mechanism: "bubblewrap and socat, user namespaces" };
    const codex: SandboxAvailability =
      namespaceProblem !== undefined
        ? { available: false, mechanism: "Codex's bubblewrap and seccomp", problem: namespaceProblem }
        : {
            available: true,
            mechanism:
              bwrap === undefined
                ? "Codex's own bubblewrap and seccomp (user namespaces not tried: no bwrap on PATH)"
                : "Codex's bubblewrap and seccomp, user namespaces",
          };
    return { claude, codex };
  }

  return function sandboxStatus(): Promise<Record<Backend, SandboxAvailability>> {
    const now = Date.now();
    if (cached === undefined || now - cached.at > ttlMs) cached = { at: now, result: probe() };
    return cached.result;
  };
}

export type SandboxStatus = ReturnType<typeof createSandboxProbe>;

const runProgram: RunProgram = (path, args, env) =>
  new Promise((resolve) => {
    execFile(path, [...args], { env: { ...env }, timeout: 15_000 }, (error, _stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
      resolve({ code, stderr: String(stderr) });
    });
  });
