import { readFileSync } from "node:fs";
import { commandPaths, rootOf } from "@bridgeworks/cli";
import { describeCommandTable } from "@bridgeworks/cli/testing";
import { describe, expect, test } from "vitest";
import type { BeeContext } from "../src/cli/context.js";
import { beeProgram, runBee } from "../src/cli/program.js";
import { createSandbox, runBee as runBundle } from "./helpers.js";

// The conventions of every `bee` command, driven from the command table itself: a command added to
// the table is covered here without a line of this file changing.

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  version: string;
};
/** The CLI reference, which must list every command with every flag (the README links it). */
const reference = {
  path: "docs/cli.md",
  text: readFileSync(new URL("../docs/cli.md", import.meta.url), "utf8"),
};
const commands = commandPaths(rootOf(beeProgram).commands);

/** In-process, with a board that cannot open (a path under a file): anything that reaches the board fails with exit 1, not 2. */
async function bee(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const context: BeeContext = {
    env: { BEE_BOARD: "/dev/null/board.db" },
    homeDir: "/dev/null/home",
    cwd: "/dev/null/cwd",
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    launcher: () => ({ command: "/usr/bin/node", args: ["/opt/bee.mjs"] }),
  };
  const code = await runBee(argv, context);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

describe("the built bee", () => {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/dev/null" };

  test("--version prints package.json's version on stdout, exit 0", async () => {
    expect(await runBundle(["--version"], env)).toEqual({
      code: 0,
      stdout: `${manifest.version}\n`,
      stderr: "",
    });
  });

  test("--help, and <command> --help for every command, print to stdout with exit 0", async () => {
    for (const argv of [["--help"], ...commands.map(({ path }) => [...path, "--help"])]) {
      const result = await runBundle(argv, env);
      expect(result.code, argv.join(" ")).toBe(0);
      expect(result.stderr, argv.join(" ")).toBe("");
      expect(result.stdout, argv.join(" ")).toMatch(/^(bee \S+: |usage: bee)/);
    }
  });

  test("an unknown flag and a missing positional exit 2 with one line naming them", async () => {
    const unknown = await runBundle(["list", "--bogus"], env);
    expect(unknown).toEqual({
      code: 2,
      stdout: "",
      stderr: "bee list: --bogus: is not an option of bee list (see 'bee list --help')\n",
    });
    const missing = await runBundle(["claim"], env);
    expect(missing).toEqual({
      code: 2,
      stdout: "",
      stderr: "bee claim: <id>: is required (see 'bee claim --help')\n",
    });
  });
});

describeCommandTable({ program: beeProgram, run: (argv) => bee(...argv), reference });

describe("usage before the board", () => {
  test.each([
    [["post", "hello"], "--to: is required"],
    [["post", "--to", "a b", "hello"], "--to: must be an agent name, * or human:<name>"],
    [["list", "--limit", "0"], '--limit: must be an integer from 1 to 500, got "0"'],
    [["list", "--board", "relative.db"], "--board: must be an absolute path or a postgres:// URL"],
    [["claim", "act_0123456789abcdef", "--as", "a b"], "--as: agent name may hold only"],
    [["setup", "claude", "--scope", "team"], '--scope: must be user or project, got "team"'],
    [["hook", "session-end"], '"session-end": is not a bee hook command'],
    [["frob"], '"frob": is not a bee command'],
  ])("%j: exit 2, %s", async (argv, message) => {
    const result = await bee(...argv);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  test("a board that cannot open is a failure (exit 1), not a usage error", async () => {
    const result = await bee("list");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^bee: /);
  });

  test("with --json a refusal is one JSON line", async () => {
    const result = await bee("claim", "--json");
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toMatchObject({
      error: { code: "usage", argument: "<id>", command: "bee claim" },
    });
  });

  test("bee alone shows the help on stderr and exits 2", async () => {
    const result = await bee();
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("usage: bee <command>");
  });
});

describe("empty lists are said in words", () => {
  test("a fresh board has no actions and no agents", async () => {
    const sandbox = createSandbox();
    try {
      const list = await runBundle(["list"], sandbox.env);
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(/^no actions on the board\ncursor \S+\n$/);
      const since = await runBundle(
        ["list", "--since", list.stdout.split("cursor ")[1]!.trim()],
        sandbox.env,
      );
      expect(since.stdout).toMatch(/^no actions after that cursor\n/);
      const agents = await runBundle(["agents"], sandbox.env);
      expect(agents).toMatchObject({ code: 0, stdout: "no agents on the board\n" });
    } finally {
      sandbox.dispose();
    }
  });
});

describe("bee claim-next", () => {
  test("claims the oldest open action for its name or *, then says there is none (exit 3)", async () => {
    const sandbox = createSandbox();
    try {
      const post = async (to: string, body: string) => {
        const posted = await runBundle(["post", "--to", to, "--json", body], sandbox.env);
        expect(posted.code).toBe(0);
        return (JSON.parse(posted.stdout) as { id: string }).id;
      };
      const forBob = await post("bob", "for bob");
      const forAlice = await post("alice", "for alice");
      const forAnyone = await post("*", "for anyone");

      const first = await runBundle(["claim-next", "--as", "alice"], sandbox.env);
      expect(first.stderr).toBe("");
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(new RegExp(`^claimed ${forAlice} as agent:alice#[0-9a-f]{8}\\n$`));

      const second = await runBundle(["claim-next", "--as", "alice", "--json"], sandbox.env);
      expect(second.code).toBe(0);
      expect(JSON.parse(second.stdout)).toMatchObject({
        outcome: "claimed",
        record: { id: forAnyone, state: "claimed" },
      });

      const none = await runBundle(["claim-next", "--as", "alice"], sandbox.env);
      expect(none).toMatchObject({ code: 3, stdout: "none: no open action for alice or *\n" });
      const noneJson = await runBundle(["claim-next", "--as", "alice", "--json"], sandbox.env);
      expect(noneJson.code).toBe(3);
      expect(JSON.parse(noneJson.stdout)).toEqual({ outcome: "none" });

      // Bob's action was never anyone else's to take.
      const bob = await runBundle(["claim-next", "--as", "bob", "--json"], sandbox.env);
      expect(JSON.parse(bob.stdout)).toMatchObject({ outcome: "claimed", record: { id: forBob } });
    } finally {
      sandbox.dispose();
    }
  });
});
