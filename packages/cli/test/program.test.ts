import { describe, expect, test } from "vitest";
import { commandPaths, rootOf, runProgram, synopsis } from "../src/index.js";
import { demo, type Seen } from "./fixture.js";

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const seen: Seen = { calls: [] };
  const code = await runProgram(demo, argv, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) }, seen);
  return { code, stdout: out.join(""), stderr: err.join(""), seen };
}

const everyCommand = commandPaths(rootOf(demo).commands).map(({ path }) => path);

describe("help and version", () => {
  test("--version prints the program's version on stdout and nothing else", async () => {
    expect(await run("--version")).toMatchObject({ code: 0, stdout: "1.2.3\n", stderr: "" });
  });

  test.each([[["--help"]], [["-h"]], [["help"]]])("%j: the root's help on stdout, exit 0", async (argv) => {
    const result = await run(...argv);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toContain("demo 1.2.3: a demonstration program");
    for (const { path, command } of commandPaths(rootOf(demo).commands)) {
      expect(result.stdout).toContain(`  ${synopsis("demo", path, command)}\n      ${command.summary}\n`);
    }
    expect(result.stdout).toContain("exit codes: 0 ok, 1 failed, 2 usage, 75 locked");
  });

  test.each(everyCommand)(
    "%s --help: its synopsis, arguments and options on stdout, exit 0",
    async (...path) => {
      const result = await run(...path, "--help");
      expect(result).toMatchObject({ code: 0, stderr: "" });
      const command = commandPaths(rootOf(demo).commands).find(
        (each) => each.path.join(" ") === path.join(" "),
      )!;
      expect(result.stdout).toContain(`usage: ${synopsis("demo", path, command.command)}`);
      for (const name of Object.keys(command.command.options)) expect(result.stdout).toContain(`--${name}`);
      for (const positional of command.command.positionals)
        expect(result.stdout).toContain(`<${positional.name}>`);
      expect(result.seen.calls).toEqual([]);
    },
  );

  test("help beats everything else on the line, even a missing required option", async () => {
    expect((await run("session", "create", "--nope", "-h")).code).toBe(0);
    expect((await run("help", "session", "create")).stdout).toContain("usage: demo session create --backend");
  });

  test("a synopsis lists every option: required bare, the rest in brackets, repeatable marked", () => {
    const create = commandPaths(demo.commands).find(({ path }) => path.join(" ") === "session create")!;
    expect(synopsis("demo", ["session", "create"], create.command)).toBe(
      "demo session create --backend claude|codex [--workspace DIR] [--env K=V]... [--port N] [--json]",
    );
    const send = commandPaths(demo.commands).find(({ path }) => path.join(" ") === "send")!;
    expect(synopsis("demo", ["send"], send.command)).toBe("demo send <session> <prompt>... [--follow]");
  });

  test("no command, or a group without one: the help on stderr, exit 2", async () => {
    const bare = await run();
    expect(bare).toMatchObject({ code: 2, stdout: "" });
    expect(bare.stderr).toContain("usage: demo <command>");
    const group = await run("session");
    expect(group).toMatchObject({ code: 2, stdout: "" });
    expect(group.stderr).toContain("usage: demo session <command>");
    expect((await run("session", "--help")).code).toBe(0);
  });
});

describe("usage is checked before anything runs (exit 2, one line naming it)", () => {
  test.each([
    [["frob"], '"frob": is not a demo command'],
    [["session", "frob"], '"frob": is not a demo session command'],
    [["--state", "x"], "--state: is not an option of demo; name a command first"],
    [
      ["session", "create", "--backend", "claude", "--nope"],
      "--nope: is not an option of demo session create",
    ],
    [["session", "create", "--backend", "claude", "-x"], "-x: is not an option of demo session create"],
    [["session", "create"], "--backend: is required"],
    [["session", "create", "--backend"], "--backend: needs a value"],
    [["session", "create", "--backend", "gemini"], '--backend: must be claude or codex, got "gemini"'],
    [["session", "create", "--backend", "claude", "--json=yes"], "--json: takes no value"],
    [
      ["session", "create", "--backend", "claude", "--port", "http"],
      "--port: must be an integer from 0 to 65535",
    ],
    [["session", "create", "--backend", "claude", "--env", "NOPE"], '--env: takes KEY=VALUE, got "NOPE"'],
    [
      ["session", "create", "--backend", "claude", "stray"],
      '"stray": is not an argument of demo session create (it takes none)',
    ],
    [["send"], "<session>: is required"],
    [["send", "s1"], "<prompt>: is required"],
    [["show", "a", "b"], '"b": is not an argument of demo show (it takes <id>)'],
    [["--version", "x"], "--version: takes no arguments"],
    [["show", "refused"], "<id>: is refused by run"],
  ])("%j", async (argv, message) => {
    const result = await run(...argv);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain(message);
    if (argv[0] !== "show") expect(result.seen.calls).toEqual([]);
  });

  test.each([
    [["session", "create", "--backend", "claude", "--env-file", "x.env"]],
    [["session", "create", "--env-file=x.env", "--backend", "claude"]],
    [["session", "create", "--nope", "--env-file"]],
  ])("%j: a retired option is refused with what replaced it, before anything else", async (argv) => {
    expect(await run(...argv)).toMatchObject({
      code: 2,
      stdout: "",
      stderr: "demo session create: --env-file: is now --env-from FILE (see 'demo session create --help')\n",
      seen: { calls: [] },
    });
  });

  test("a retired option's name after -- is a word, not the option; help and completion leave it out", async () => {
    expect((await run("session", "create", "--backend", "claude", "--", "--env-file")).stderr).toContain(
      '"--env-file": is not an argument of demo session create',
    );
    expect((await run("session", "create", "--help")).stdout).not.toContain("env-file");
    for (const shell of ["bash", "zsh", "fish"])
      expect((await run("completion", shell)).stdout).not.toContain("env-file");
  });

  test("the line names the command and where its help is", async () => {
    expect((await run("send")).stderr).toBe("demo send: <session>: is required (see 'demo send --help')\n");
  });

  test("with --json the refusal is one JSON line naming the argument", async () => {
    const result = await run("session", "create", "--json", "--port", "99999", "--backend", "codex");
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: "usage",
        message: '--port: must be an integer from 0 to 65535, got "99999"',
        argument: "--port",
        command: "demo session create",
      },
    });
  });
});

describe("running", () => {
  test("run gets the options and positionals checked, converted and named", async () => {
    const created = await run(
      "session",
      "create",
      "--backend",
      "codex",
      "--env",
      "A=1",
      "--env",
      "B=x=y",
      "--port",
      "80",
    );
    expect(created.code).toBe(0);
    expect(created.seen.calls).toEqual([
      {
        command: "session create",
        input: {
          backend: "codex",
          env: [
            ["A", "1"],
            ["B", "x=y"],
          ],
          port: 80,
          json: false,
          workspace: undefined,
        },
      },
    ]);
    const sent = await run("send", "s1", "hello", "there", "-f");
    expect(sent.code).toBe(7);
    expect(sent.seen.calls).toEqual([
      { command: "send", input: { session: "s1", prompt: ["hello", "there"], follow: true } },
    ]);
    const dashed = await run("send", "s1", "--", "--help", "me");
    expect(dashed.seen.calls[0]?.input).toMatchObject({ prompt: ["--help", "me"] });
  });

  test("a failure is one line on stderr, exit 1; the program maps its own errors to their codes", async () => {
    expect(await run("show", "broken")).toMatchObject({
      code: 1,
      stdout: "",
      stderr: "demo: it broke across two lines\n",
    });
    expect(await run("show", "locked")).toMatchObject({
      code: 75,
      stderr: "demo: the state dir is locked\n",
    });
    const json = await run("show", "locked", "--json");
    expect(JSON.parse(json.stderr)).toEqual({
      error: { code: "state_dir_locked", message: "the state dir is locked" },
    });
  });
});
