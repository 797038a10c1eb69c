// Debian packages the end-to-end tests drive for real: tmux (interactive Claude Code), Chromium
// (the Floot web UI), the PostgreSQL server (the bee board for teams), and zsh and fish (the CLIs'
// generated shell completion; bash is always there), and bubblewrap and socat (the sandbox Claude
// Code confines a Floot turn in: it refuses to start one without both). Installed when missing.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";

const requirements = [
  { debian: "tmux", present: () => onPath("tmux") },
  { debian: "chromium", present: () => existsSync("/usr/bin/chromium") },
  { debian: "postgresql", present: () => postgresBinDir() !== undefined },
  { debian: "zsh", present: () => onPath("zsh") },
  { debian: "fish", present: () => onPath("fish") },
  { debian: "bubblewrap", present: () => onPath("bwrap") },
  { debian: "socat", present: () => onPath("socat") },
];

export function missingSystemPackages() {
  return requirements
    .filter((requirement) => !requirement.present())
    .map((requirement) => requirement.debian);
}

/** Installs what is missing with apt-get (as root, or through passwordless sudo); throws a clear error otherwise. */
export function ensureSystemPackages(log = console.error) {
  const missing = missingSystemPackages();
  if (missing.length === 0) return;
  const asRoot = process.getuid?.() === 0;
  const prefix = asRoot ? [] : ["sudo", "-n"];
  if (!onPath("apt-get") || (!asRoot && !onPath("sudo"))) {
    throw new Error(
      `the tests need these system packages: ${missing.join(", ")}; install them and run again`,
    );
  }
  log(`bootstrap: installing system packages: ${missing.join(", ")}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [
    ["apt-get", "update", "-qq"],
    ["apt-get", "install", "-y", "-qq", "--no-install-recommends", ...missing],
  ]) {
    const [command, ...rest] = [...prefix, ...args];
    const result = spawnSync(command, rest, { stdio: ["ignore", "ignore", "inherit"], env });
    if (result.status !== 0)
      throw new Error(`${args.join(" ")} failed; the tests need: ${missing.join(", ")}`);
  }
}

export function postgresBinDir() {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return versions.map((version) => `${root}/${version}/bin`).find((dir) => existsSync(`${dir}/initdb`));
}

function onPath(command) {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}
