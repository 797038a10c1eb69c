import { describeError } from "@bridgeworks/runtime";
import { type CommandGroup, defineCommand, type Failure, type Program } from "./command.js";
import { completionScript, shells } from "./completion.js";
import { renderHelp } from "./help.js";
import { label, resolveInvocation } from "./parse.js";
import { UsageError } from "./usage-error.js";

/** Where the runner writes help, versions and errors; the commands write through their own context. */
export interface ProgramOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The conventional exit codes; a program adds its own (bee 3, floot 75). */
export const exitCodes = { ok: 0, failed: 1, usage: 2 } as const;

/** The table as the runner sees it: the program's commands plus `completion`, which prints to `print`. */
export function rootOf<Context>(
  program: Program<Context>,
  print: (text: string) => void = () => {},
): CommandGroup<Context> {
  const completion = defineCommand<Context>()({
    name: "completion",
    summary: "print the shell completion script, generated from this command table",
    positionals: [{ name: "shell", summary: "the shell", choices: shells }],
    examples: [
      {
        command: `source <(${program.name} completion bash)`,
        summary: "completion in this bash (add it to ~/.bashrc)",
      },
      {
        command: `${program.name} completion fish > ~/.config/fish/completions/${program.name}.fish`,
        summary: "completion in every fish",
      },
    ],
    run: ({ args }) => {
      print(completionScript(args.shell, program.name, program.version, root));
    },
  });
  const root: CommandGroup<Context> = {
    kind: "group",
    name: program.name,
    summary: program.summary,
    commands: [...program.commands, completion],
  };
  return root;
}

/**
 * Runs one command line: `--version` and `--help` (any command, on stdout, exit 0), usage checked
 * before the command runs (exit 2), a failure as one line on stderr (exit 1 or the program's code),
 * as `{"error": {code, message}}` when `--json` was given. Resolves with the exit code.
 */
export async function runProgram<Context>(
  program: Program<Context>,
  argv: readonly string[],
  output: ProgramOutput,
  context: Context,
): Promise<number> {
  const root = rootOf(program, (text) => output.stdout(text));
  const json = argv.slice(0, argv.includes("--") ? argv.indexOf("--") : argv.length).includes("--json");
  let where = program.name;
  try {
    const invocation = resolveInvocation(root, argv);
    switch (invocation.kind) {
      case "version":
        output.stdout(`${program.version}\n`);
        return exitCodes.ok;
      case "help":
        output.stdout(renderHelp(program, invocation.path, invocation.node));
        return exitCodes.ok;
      case "incomplete":
        output.stderr(renderHelp(program, invocation.path, invocation.node));
        return exitCodes.usage;
      case "command": {
        where = label(program.name, invocation.path);
        const code = await invocation.command.run(invocation.input, context);
        return typeof code === "number" ? code : exitCodes.ok;
      }
    }
  } catch (error) {
    const failure = describeFailure(program, error);
    const usage = error instanceof UsageError;
    if (usage) where = error.command ?? where;
    if (json) {
      const body = {
        error: {
          code: failure.code,
          message: failure.message,
          ...(usage && { argument: error.argument, command: where }),
        },
      };
      output.stderr(`${JSON.stringify(body)}\n`);
    } else if (usage) {
      output.stderr(`${where}: ${oneLine(failure.message)} (see '${where} --help')\n`);
    } else {
      output.stderr(`${program.name}: ${oneLine(failure.message)}\n`);
    }
    return failure.exitCode;
  }
}

function describeFailure<Context>(program: Program<Context>, error: unknown): Failure {
  if (error instanceof UsageError)
    return { exitCode: exitCodes.usage, code: "usage", message: error.message };
  return (
    program.describeFailure?.(error) ?? {
      exitCode: exitCodes.failed,
      code: "failed",
      message: describeError(error),
    }
  );
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}
