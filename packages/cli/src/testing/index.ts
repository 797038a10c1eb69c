import { describe, expect, test } from "vitest";
import type { Program } from "../command.js";
import { commandPaths } from "../command.js";
import { synopsis } from "../help.js";
import { rootOf } from "../run.js";

export interface CommandLineResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CommandTableSuiteOptions<Context> {
  program: Program<Context>;
  /**
   * Runs one command line in-process, in a world where whatever a command looks up after its usage was
   * accepted (a daemon, a board) fails: a usage error is then exit 2, and anything past usage exit 1.
   */
  run(argv: string[]): Promise<CommandLineResult>;
  /**
   * The page of the app's docs that holds its CLI reference (`path`, as the tests name it, and its
   * `text`), which must show every command's synopsis with every flag.
   */
  reference: { path: string; text: string };
}

/**
 * The conventions every command of a program keeps, as vitest tests driven from its command table: a
 * command added to the table is covered without a test changing. `--help` on stdout with exit 0 and
 * the synopsis; an unknown flag and a missing positional exit 2 with one line naming them; the CLI
 * reference page lists the command with all its flags.
 */
export function describeCommandTable<Context>({
  program,
  run,
  reference,
}: CommandTableSuiteOptions<Context>): void {
  const commands = commandPaths(rootOf(program).commands).map(({ path, command }) => ({
    name: path.join(" "),
    path,
    command,
  }));
  const withPositionals = commands.filter(({ command }) =>
    command.positionals.some((each) => !each.optional),
  );
  const bin = program.name;

  describe(`every command of ${bin}'s table`, () => {
    test.each(commands)(
      `${bin} $name --help: its synopsis with every option, on stdout, exit 0`,
      async ({ path, command }) => {
        const result = await run([...path, "--help"]);
        expect(result).toMatchObject({ code: 0, stderr: "" });
        expect(result.stdout).toContain(`usage: ${synopsis(bin, path, command)}\n`);
      },
    );

    test.each(commands)(
      `${bin} $name --bogus: exit 2, one line naming --bogus, before any lookup`,
      async ({ path }) => {
        const result = await run([...path, "--bogus"]);
        expect(result.code).toBe(2);
        expect(result.stdout).toBe("");
        expect(result.stderr).toMatch(/^[^\n]*--bogus: is not an option of [^\n]*\n$/);
      },
    );

    test.each(withPositionals)(
      `${bin} $name without its positional: exit 2, one line naming it`,
      async ({ name, path, command }) => {
        const result = await run(path);
        expect(result.code).toBe(2);
        expect(result.stderr).toBe(
          `${bin} ${name}: <${command.positionals[0]!.name}>: is required (see '${bin} ${name} --help')\n`,
        );
      },
    );

    test.each(commands)(`${bin} $name is in ${reference.path} with every flag`, ({ path, command }) => {
      expect(reference.text).toContain(synopsis(bin, path, command));
    });
  });
}
