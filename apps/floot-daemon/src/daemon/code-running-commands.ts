// Which command prefixes let the agent run code nobody was shown. A prefix rule (`Bash(x:*)`) allows
// every command that starts with x, whatever follows: on an interpreter (`python3 -c …`), a shell, a
// wrapper (`env`, `sudo`, `xargs` run the command after them), a package runner, or a command with an
// option that runs a command (`find -exec`), "allow for this session" would allow any code at all. The
// one list the daemon's suggestions and the "runs any code" marks read. Claude Code 2.1.332 keeps
// similar lists of its own (in the binary: `f0o`/`p0o`, "python", "node", "npx", "npm exec", "bash", "sh",
// "ssh", "env", "xargs", "sudo", …; `L5n` for wrappers); these are the daemon's, with the reason for each.

const groups: ReadonlyArray<{ reason: string; names: readonly string[] }> = [
  {
    reason: "an interpreter: runs the code its arguments or stdin hold (-c, -e, a script)",
    names: [
      ...["python", "pypy", "node", "nodejs", "deno", "bun", "tsx", "ts-node", "ruby", "irb", "erb"],
      ...["perl", "php", "lua", "luajit", "tclsh", "wish", "expect", "rscript", "r", "julia", "java"],
      ...["jshell", "groovy", "scala", "kotlin", "swift", "osascript", "awk", "gawk", "mawk", "nawk"],
      ...["m4", "sed", "sqlite3", "psql", "mysql", "gdb", "lldb", "vim", "vi", "nvim", "emacs", "ed"],
    ],
  },
  {
    reason: "a shell, a shell keyword or builtin: runs the command line it is given",
    names: [
      ...["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "hush", "fish", "csh", "tcsh", "rbash"],
      ...["rsh", "busybox", "toybox", "pwsh", "powershell", "cmd", "eval", "source", ".", "exec", "trap"],
      ...["fc", "if", "then", "else", "elif", "while", "until", "for", "do", "case", "select", "function"],
      ...["coproc", "time", "noglob", "command", "builtin"],
    ],
  },
  {
    reason: "a wrapper: runs the command that follows it (as another user, later, elsewhere, or confined)",
    names: [
      ...["env", "nohup", "timeout", "nice", "ionice", "chrt", "taskset", "stdbuf", "setsid", "sudo"],
      ...["doas", "su", "runuser", "pkexec", "xargs", "parallel", "watch", "strace", "ltrace", "script"],
      ...["flock", "unshare", "nsenter", "chroot", "firejail", "bwrap", "systemd-run", "caffeinate"],
      ...["arch", "setarch", "linux32", "linux64", "i386", "x86_64", "tmux", "screen", "at", "batch"],
      ...["crontab", "open", "xdg-open", "ssh", "sshpass", "scp", "sftp", "rsync"],
    ],
  },
  {
    reason: "a package runner: downloads a package and runs it",
    names: ["npx", "pnpx", "bunx", "uvx", "pipx"],
  },
  {
    reason: "has an option that runs a command (find -exec, make --eval, tar --to-command, go -toolexec, …)",
    names: ["find", "make", "gmake", "tar", "zip", "man", "go", "mvn", "gradle"],
  },
];

/** Each name, normalized (see `programName`), and why no prefix of it is safe. */
const runsAnyCode = new Map(groups.flatMap(({ reason, names }) => names.map((name) => [name, reason])));

/**
 * Tools whose subcommand decides: `npm test:*` is safe, `npm exec` runs what follows, and `npm:*` covers
 * both. A subcommand is listed when it runs code named on the command line or downloads and runs a
 * package; the project's own scripts (`npm test`, `npm run build`) are not, the human sees them in the
 * workspace. An option before the subcommand (`git -c …`, `docker -H …`) leaves no safe prefix.
 */
const runsCodeBySubcommand = new Map<string, ReadonlySet<string>>([
  ["npm", new Set(["exec", "x", "create", "init", "innit", "explore", "install", "i", "add", "isntall"])],
  ["pnpm", new Set(["exec", "dlx", "create", "add", "install", "i", "x"])],
  ["yarn", new Set(["exec", "dlx", "create", "add", "node", "global"])],
  ["pip", new Set(["install", "download", "wheel"])],
  ["uv", new Set(["run", "tool", "pip", "add"])],
  ["poetry", new Set(["run", "shell", "add", "install"])],
  ["pipenv", new Set(["run", "shell", "install"])],
  ["pdm", new Set(["run", "add", "install"])],
  ["hatch", new Set(["run", "shell"])],
  ["conda", new Set(["run", "install"])],
  ["mamba", new Set(["run", "install"])],
  ["cargo", new Set(["run", "install", "script"])],
  ["gem", new Set(["install", "exec"])],
  ["bundle", new Set(["exec", "install", "add"])],
  ["dotnet", new Set(["run", "exec", "tool"])],
  [
    "git",
    new Set([
      ...["config", "rebase", "bisect", "submodule", "filter-branch", "filter-repo", "grep", "difftool"],
      // --upload-pack, --receive-pack, --exec: a local command.
      ...["mergetool", "fetch", "pull", "push", "clone", "ls-remote", "archive"],
    ]),
  ],
  ["docker", new Set(["run", "exec", "create", "start", "compose", "build", "buildx", "plugin", "debug"])],
  ["podman", new Set(["run", "exec", "create", "start", "compose", "build", "play", "kube"])],
  [
    "kubectl",
    new Set([
      ...["exec", "run", "debug", "attach", "cp", "apply", "create", "replace", "patch", "edit"],
      ...["plugin", "port-forward", "proxy"],
    ]),
  ],
]);

/** A command's name as the lists hold it: no path, lower case, no `.exe`, no version (`python3.11`). */
function programName(word: string): string {
  return word
    .slice(word.lastIndexOf("/") + 1)
    .toLowerCase()
    .replace(/\.exe$/, "")
    .replace(/[-_]?\d+(?:\.\d+)*$/, "");
}

/** Why a prefix starting with `word` lets the agent run any code, if it does. */
function runsAnyCodeReason(word: string): string | undefined {
  const name = word.slice(word.lastIndexOf("/") + 1).toLowerCase();
  return runsAnyCode.get(name) ?? runsAnyCode.get(programName(word));
}

const plainProgram = /^[A-Za-z0-9_][A-Za-z0-9_.+-]*$/;
const plainSubcommand = /^[a-z][a-z0-9-]*$/;

/**
 * How many of `words` (a command's first words) make the shortest prefix that runs no code nobody saw:
 * 1 (`touch`), 2 (`npm test`), or undefined when there is none (an interpreter, a wrapper, a path, an
 * assignment, a quote or a variable first, a subcommand that runs code, a bare multi-purpose tool).
 */
export function safePrefixLength(words: readonly string[]): number | undefined {
  const [program, subcommand] = words;
  if (program === undefined || !plainProgram.test(program) || runsAnyCodeReason(program) !== undefined)
    return undefined;
  const risky = runsCodeBySubcommand.get(programName(program));
  if (risky === undefined) return 1;
  if (subcommand === undefined || !plainSubcommand.test(subcommand) || risky.has(subcommand))
    return undefined;
  return 2;
}

/** Whether a prefix (`python3`, `npm`, `npm test`) lets the agent run code nobody was shown. */
export function prefixRunsAnyCode(prefix: string): boolean {
  const words = prefix.trim().split(/\s+/).filter(Boolean);
  const length = safePrefixLength(words);
  return length === undefined || length > words.length;
}
