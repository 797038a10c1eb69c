import { parseArgs } from "node:util";
import { describeError } from "@bridgeworks/runtime";
import type { Command, CommandGroup, CommandNode, OptionSpecs, PositionalSpec } from "./command.js";
import { UsageError } from "./usage-error.js";

/** What an argv asks for, before anything runs. */
export type Invocation<Context> =
  | { kind: "version" }
  /** `--help` (or `help …`) of the root, a group or a command: stdout, exit 0. */
  | { kind: "help"; path: string[]; node: CommandNode<Context> }
  /** A group with no command named (`floot session`): its help on stderr, exit 2. */
  | { kind: "incomplete"; path: string[]; node: CommandGroup<Context> }
  | { kind: "command"; path: string[]; command: Command<Context>; input: ParsedInput };

export interface ParsedInput {
  options: Record<string, unknown>;
  args: Record<string, unknown>;
}

export const helpFlags = ["--help", "-h"] as const;

/** Resolves `argv` against the table and checks it: a `UsageError` names what is wrong. */
export function resolveInvocation<Context>(
  root: CommandGroup<Context>,
  argv: readonly string[],
): Invocation<Context> {
  const end = argv.indexOf("--");
  const flags = end === -1 ? argv : argv.slice(0, end);
  const wantsHelp = flags.some((token) => (helpFlags as readonly string[]).includes(token));
  if (argv[0] === "--version") {
    if (argv.length > 1) throw new UsageError("--version", "takes no arguments");
    return { kind: "version" };
  }
  if (argv[0] === "help") {
    const { path, node } = walk(root, argv.slice(1), { allowFlags: false });
    return { kind: "help", path, node };
  }
  const { path, node, rest } = walk(root, argv, { allowFlags: wantsHelp });
  if (wantsHelp) return { kind: "help", path, node };
  if (node.kind === "group") return { kind: "incomplete", path, node };
  try {
    return { kind: "command", path, command: node, input: parseCommandArgs(root.name, path, node, rest) };
  } catch (error) {
    if (error instanceof UsageError) error.command ??= label(root.name, path);
    throw error;
  }
}

function walk<Context>(
  root: CommandGroup<Context>,
  argv: readonly string[],
  { allowFlags }: { allowFlags: boolean },
): { path: string[]; node: CommandNode<Context>; rest: readonly string[] } {
  const path: string[] = [];
  let node: CommandNode<Context> = root;
  let index = 0;
  while (node.kind === "group") {
    const token = argv[index];
    if (token === undefined) break;
    if (token.startsWith("-")) {
      if (allowFlags) break;
      throw refusal(
        token,
        `is not an option of ${label(root.name, path)}; name a command first`,
        root.name,
        path,
      );
    }
    const child: CommandNode<Context> | undefined = node.commands.find((each) => each.name === token);
    if (child === undefined) {
      throw refusal(JSON.stringify(token), `is not a ${label(root.name, path)} command`, root.name, path);
    }
    path.push(token);
    node = child;
    index += 1;
  }
  return { path, node, rest: argv.slice(index) };
}

function refusal(argument: string, problem: string, program: string, path: readonly string[]): UsageError {
  const error = new UsageError(argument, problem);
  error.command = label(program, path);
  return error;
}

/** Parses a command's own arguments strictly: unknown options, missing values and stray words are usage errors. */
export function parseCommandArgs<Context>(
  program: string,
  path: readonly string[],
  command: Command<Context>,
  argv: readonly string[],
): ParsedInput {
  const where = label(program, path);
  refuseRetired(command.retiredOptions, argv);
  let parsed: {
    values: Record<string, string | boolean | (string | boolean)[] | undefined>;
    positionals: string[];
  };
  try {
    parsed = parseArgs({
      args: [...argv],
      options: parseArgsConfig(command.options),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw describeParseFailure(error, where);
  }
  const args = checkPositionals(command.positionals, parsed.positionals, where);
  return { options: checkOptions(command.options, parsed.values), args };
}

/** A retired option anywhere before `--` (alone or `--name=…`) is refused with what replaced it. */
function refuseRetired(retired: Readonly<Record<string, string>>, argv: readonly string[]): void {
  for (const token of argv) {
    if (token === "--") return;
    if (!token.startsWith("--")) continue;
    const name = token.slice(2).split("=", 1)[0] as string;
    const instead = Object.hasOwn(retired, name) ? retired[name] : undefined;
    if (instead !== undefined) throw new UsageError(`--${name}`, instead);
  }
}

function parseArgsConfig(options: OptionSpecs) {
  return Object.fromEntries(
    Object.entries(options).map(([name, spec]) => [
      name,
      {
        type: spec.type,
        ...(spec.type === "string" && spec.multiple && { multiple: true }),
        ...(spec.short !== undefined && { short: spec.short }),
      },
    ]),
  );
}

function describeParseFailure(error: unknown, where: string): unknown {
  const code = (error as { code?: unknown }).code;
  const message = describeError(error);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const option = /'(-[^']*)'/.exec(message)?.[1] ?? "option";
    return new UsageError(option, `is not an option of ${where}`);
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const option = /--[A-Za-z0-9][A-Za-z0-9-]*/.exec(message)?.[0] ?? "option";
    return new UsageError(option, /does not take/.test(message) ? "takes no value" : "needs a value");
  }
  return error;
}

function checkOptions(
  options: OptionSpecs,
  values: Record<string, string | boolean | (string | boolean)[] | undefined>,
): Record<string, unknown> {
  const checked: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(options)) {
    const raw = values[name];
    const flag = `--${name}`;
    if (spec.type === "boolean") {
      checked[name] = raw === true;
      continue;
    }
    const given = raw === undefined ? [] : (Array.isArray(raw) ? raw : [raw]).map(String);
    if (spec.required && given.length === 0) throw new UsageError(flag, "is required");
    const converted = given.map((value) => {
      if (spec.choices && !spec.choices.includes(value)) {
        throw new UsageError(flag, `must be ${choiceList(spec.choices)}, got ${JSON.stringify(value)}`);
      }
      return spec.parse ? spec.parse(value, flag) : value;
    });
    checked[name] = spec.multiple ? converted : converted[0];
  }
  return checked;
}

function checkPositionals(
  specs: readonly PositionalSpec[],
  positionals: readonly string[],
  where: string,
): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  let index = 0;
  for (const spec of specs) {
    const name = `<${spec.name}>`;
    const taken = spec.variadic ? positionals.slice(index) : positionals.slice(index, index + 1);
    index += taken.length;
    if (taken.length === 0 && !spec.optional) throw new UsageError(name, "is required");
    for (const value of taken) {
      if (spec.choices && !spec.choices.includes(value)) {
        throw new UsageError(name, `must be ${choiceList(spec.choices)}, got ${JSON.stringify(value)}`);
      }
    }
    args[spec.name] = spec.variadic ? taken : taken[0];
  }
  const extra = positionals[index];
  if (extra !== undefined) {
    const takes = specs.length === 0 ? "none" : specs.map((spec) => `<${spec.name}>`).join(" ");
    throw new UsageError(JSON.stringify(extra), `is not an argument of ${where} (it takes ${takes})`);
  }
  return args;
}

export function choiceList(choices: readonly string[]): string {
  if (choices.length <= 2) return choices.join(" or ");
  return `one of ${choices.join(", ")}`;
}

/** `floot session create`: the program and the command path. */
export function label(program: string, path: readonly string[]): string {
  return [program, ...path].join(" ");
}
