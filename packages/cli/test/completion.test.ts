import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { commandPaths, completionScript, rootOf, runProgram, type Shell } from "../src/index.js";
import { demo } from "./fixture.js";

// The generated scripts run in the real shells (Debian's bash, zsh and fish, installed by
// scripts/system-packages.mjs): each completes a command line and the test reads what was offered.

let dir: string;
const scripts = {} as Record<Shell, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "cli-completion-"));
  for (const shell of ["bash", "zsh", "fish"] as const) {
    const out: string[] = [];
    const code = await runProgram(
      demo,
      ["completion", shell],
      { stdout: (t) => out.push(t), stderr: () => {} },
      {
        calls: [],
      },
    );
    expect(code).toBe(0);
    scripts[shell] = join(dir, `demo.${shell}`);
    writeFileSync(scripts[shell], out.join(""));
  }
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(command: string, args: string[]): string {
  const result = spawnSync(command, args, {
    encoding: "utf8",
    timeout: 30_000,
    env: { PATH: process.env.PATH, HOME: dir, TMPDIR: dir },
  });
  if (result.status !== 0) throw new Error(`${command} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

/** zsh completes every line of the table in one interactive session (compinit alone takes a while). */
const zshOffers = new Map<string, string[]>();

const complete: Record<Shell, (line: string) => string[]> = {
  bash(line) {
    const words = line.split(" ");
    const program = [
      `source ${JSON.stringify(scripts.bash)}`,
      `COMP_WORDS=(${words.map((word) => JSON.stringify(word)).join(" ")})`,
      `COMP_CWORD=${words.length - 1}`,
      "_demo",
      `printf "%s\\n" "\${COMPREPLY[@]}"`,
    ].join("\n");
    return lines(run("bash", ["--norc", "--noprofile", "-c", program]));
  },
  zsh(line) {
    if (!zshOffers.has(line)) {
      const lines = [...cases.map(([each]) => each), ...extraLines];
      const output = run("zsh", ["-f", join(import.meta.dirname, "complete.zsh"), scripts.zsh, ...lines]);
      for (const section of output.split(/^=== /m).slice(1)) {
        const [header, ...offered] = section.split("\n");
        zshOffers.set(
          header!,
          offered.filter((word) => word !== ""),
        );
      }
    }
    const offered = zshOffers.get(line);
    if (offered === undefined) throw new Error(`zsh completed no line ${JSON.stringify(line)}`);
    return offered;
  },
  fish(line) {
    const output = run("fish", [
      "--no-config",
      "-c",
      `source ${scripts.fish}; complete -C ${fishQuote(line)}`,
    ]);
    return lines(output).map((entry) => entry.split("\t")[0]!);
  },
};

function lines(text: string): string[] {
  return text.split("\n").filter((line) => line !== "");
}

function fishQuote(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

const cases: [line: string, offered: string[], notOffered: string[]][] = [
  ["demo ", ["session", "send", "show", "completion"], ["create"]],
  ["demo --", ["--help", "--version"], ["--json"]],
  ["demo session ", ["create"], ["send", "--version"]],
  [
    "demo session create --",
    ["--backend", "--workspace", "--env", "--port", "--json", "--help"],
    ["--follow"],
  ],
  ["demo session create --backend ", ["claude", "codex"], ["--json"]],
  ["demo send s1 --", ["--follow", "--help"], ["--backend"]],
  ["demo completion ", ["bash", "zsh", "fish"], ["create"]],
];

const extraLines = ["demo session create --port "];

// The first line a shell completes starts it (zsh: one interactive session with compinit), which
// takes seconds on a loaded machine; the bound only keeps a hang from passing.
const shellStartBoundMs = 60_000;

describe.each(["bash", "zsh", "fish"] as const)("%s completion from the command table", (shell) => {
  test.each(cases)(
    "%j offers %j",
    (line, offered, notOffered) => {
      const got = complete[shell](line);
      expect(got).toEqual(expect.arrayContaining(offered));
      for (const word of notOffered) expect(got).not.toContain(word);
    },
    shellStartBoundMs,
  );

  test(
    "a value option offers nothing of its own when it has no choices",
    () => {
      expect(complete[shell]("demo session create --port ").filter((word) => word.startsWith("-"))).toEqual(
        [],
      );
    },
    shellStartBoundMs,
  );
});

test("each script names every command path and every option of the table", () => {
  const root = rootOf(demo);
  for (const shell of ["bash", "zsh", "fish"] as const) {
    const script = completionScript(shell, demo.name, demo.version, root);
    for (const { path, command } of commandPaths(root.commands)) {
      expect(script).toContain(path.map((name) => `/${name}`).join(""));
      for (const option of Object.keys(command.options)) expect(script).toContain(option);
    }
  }
});
