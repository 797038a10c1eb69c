import {
  type Command,
  type CommandGroup,
  type CommandNode,
  commandPaths,
  type OptionSpec,
  type PositionalSpec,
  type Program,
} from "./command.js";
import { choiceList, label } from "./parse.js";

const helpLine = ["-h, --help", "show this help"] as const;

/** The one-line synopsis of a command, every option included: what `--help` and the README show. */
export function synopsis<Context>(
  program: string,
  path: readonly string[],
  command: Command<Context>,
): string {
  const positionals = command.positionals.map(positionalToken);
  const options = Object.entries(command.options).map(([name, spec]) => optionToken(name, spec));
  return [label(program, path), ...positionals, ...options].join(" ");
}

function positionalToken(spec: PositionalSpec): string {
  const token = `<${spec.name}>${spec.variadic ? "..." : ""}`;
  return spec.optional ? `[${token}]` : token;
}

function optionToken(name: string, spec: OptionSpec): string {
  const token = spec.type === "boolean" ? `--${name}` : `--${name} ${placeholder(spec)}`;
  if (spec.type === "string" && spec.required) return token;
  const repeat = spec.type === "string" && spec.multiple ? "..." : "";
  return `[${token}]${repeat}`;
}

function placeholder(spec: OptionSpec & { type: "string" }): string {
  return spec.placeholder ?? spec.choices?.join("|") ?? "VALUE";
}

/** Help for the root (`path` empty), a group or a command. */
export function renderHelp<Context>(
  program: Program<Context>,
  path: readonly string[],
  node: CommandNode<Context>,
): string {
  if (node.kind === "command") return renderCommandHelp(program, path, node);
  return path.length === 0 ? renderRootHelp(program, node) : renderGroupHelp(program, path, node);
}

/** Every command under `path` with its whole synopsis, its summary below. */
function commandList<Context>(
  program: string,
  path: readonly string[],
  nodes: readonly CommandNode<Context>[],
): string {
  return commandPaths(nodes, path)
    .map(({ path: full, command }) => `  ${synopsis(program, full, command)}\n      ${command.summary}`)
    .join("\n");
}

function renderRootHelp<Context>(program: Program<Context>, root: CommandGroup<Context>): string {
  return joinSections([
    `${program.name} ${program.version}: ${program.summary}`,
    `usage: ${program.name} <command> [options]`,
    section("commands", commandList(program.name, [], root.commands)),
    section("options", table([helpLine, ["--version", `print ${program.name}'s version`]])),
    program.notes?.trimEnd(),
    `Run '${program.name} <command> --help' for a command's arguments and options.`,
  ]);
}

function renderGroupHelp<Context>(
  program: Program<Context>,
  path: readonly string[],
  group: CommandGroup<Context>,
): string {
  return joinSections([
    `usage: ${label(program.name, path)} <command> [options]`,
    group.summary,
    section("commands", commandList(program.name, path, group.commands)),
    `Run '${label(program.name, path)} <command> --help' for a command's arguments and options.`,
  ]);
}

function renderCommandHelp<Context>(
  program: Program<Context>,
  path: readonly string[],
  command: Command<Context>,
): string {
  const positionals = command.positionals.map((spec) => [
    positionalToken(spec),
    spec.choices ? `${spec.summary} (${choiceList(spec.choices)})` : spec.summary,
  ]);
  const options = Object.entries(command.options).map(([name, spec]) => {
    const flag = `${spec.short ? `-${spec.short}, ` : ""}--${name}${spec.type === "string" ? ` ${placeholder(spec)}` : ""}`;
    const notes = [
      spec.type === "string" && spec.choices && spec.placeholder ? choiceList(spec.choices) : undefined,
      spec.type === "string" && spec.required ? "required" : undefined,
      spec.type === "string" && spec.multiple ? "repeatable" : undefined,
    ].filter(Boolean);
    return [flag, notes.length > 0 ? `${spec.summary} (${notes.join(", ")})` : spec.summary];
  });
  const examples = command.examples.map((example) => `  ${example.command}\n      ${example.summary}`);
  return joinSections([
    `usage: ${synopsis(program.name, path, command)}`,
    command.summary,
    command.description?.trimEnd(),
    positionals.length > 0 ? section("arguments", table(positionals)) : undefined,
    section("options", table([...options, helpLine])),
    examples.length > 0 ? section("examples", examples.join("\n")) : undefined,
  ]);
}

function section(title: string, body: string): string {
  return `${title}:\n${body}`;
}

function table(rows: readonly (readonly [string, string] | string[])[]): string {
  const width = Math.min(32, Math.max(...rows.map(([left]) => left!.length)) + 2);
  return rows
    .map(([left, right]) =>
      left!.length + 2 > width
        ? `  ${left}\n  ${" ".repeat(width)}${right}`
        : `  ${left!.padEnd(width)}${right}`,
    )
    .join("\n");
}

function joinSections(parts: readonly (string | undefined)[]): string {
  return `${parts.filter((part) => part !== undefined && part !== "").join("\n\n")}\n`;
}
