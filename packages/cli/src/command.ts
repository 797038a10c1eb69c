// The command table: every command of a program as data (name, summary, options, positionals,
// examples, run), from which parsing, help, the README synopsis and shell completion are all derived.

export interface StringOption {
  type: "string";
  summary: string;
  /** The value's name in help and synopsis: `DIR`, `N`, `K=V`. Default: the choices, else `VALUE`. */
  placeholder?: string;
  /** May be given more than once; the values arrive as an array. */
  multiple?: boolean;
  /** A usage error when absent. */
  required?: boolean;
  short?: string;
  /** The only values allowed: checked before `run`, offered by completion. */
  choices?: readonly string[];
  /** Checks and converts the value before `run`; throws a `UsageError` naming the option. */
  parse?: (raw: string, option: string) => unknown;
  /** What the shell completes for the value. */
  complete?: "file" | "directory";
}

export interface BooleanOption {
  type: "boolean";
  summary: string;
  short?: string;
}

export type OptionSpec = StringOption | BooleanOption;
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

export interface PositionalSpec {
  name: string;
  summary: string;
  /** May be left out. */
  optional?: boolean;
  /** Takes every remaining argument (at least one unless optional). Only the last may be. */
  variadic?: boolean;
  /** The only values allowed: checked before `run`, offered by completion. */
  choices?: readonly string[];
}

export interface Example {
  command: string;
  summary: string;
}

type StringValue<S> = S extends { parse: (raw: string, option: string) => infer T }
  ? T
  : S extends { choices: readonly (infer C)[] }
    ? C
    : string;

export type OptionValue<S extends OptionSpec> = S extends { type: "boolean" }
  ? boolean
  : S extends { multiple: true }
    ? StringValue<S>[]
    : S extends { required: true }
      ? StringValue<S>
      : StringValue<S> | undefined;

export type OptionValues<O extends OptionSpecs> = { -readonly [K in keyof O]: OptionValue<O[K]> };

type PositionalValue<P> = P extends { variadic: true }
  ? string[]
  : P extends { optional: true }
    ? (P extends { choices: readonly (infer C)[] } ? C : string) | undefined
    : P extends { choices: readonly (infer C)[] }
      ? C
      : string;

export type PositionalValues<P extends readonly PositionalSpec[]> = {
  -readonly [E in P[number] as E["name"]]: PositionalValue<E>;
};

/** What `run` gets: the options by name, the positionals by name, already checked. */
export interface CommandInput<O extends OptionSpecs, P extends readonly PositionalSpec[]> {
  options: OptionValues<O>;
  args: PositionalValues<P>;
}

/** The exit code; nothing means 0. */
// biome-ignore lint/suspicious/noConfusingVoidType: a command that returns nothing has exited 0
export type CommandOutcome = number | undefined | void;

export interface CommandSpec<Context, O extends OptionSpecs, P extends readonly PositionalSpec[]> {
  /** One word; a group adds its own in front (`session create`). */
  name: string;
  /** One line, lower case, no full stop: what the command does. */
  summary: string;
  /** More lines for the command's own help. */
  description?: string;
  options?: O;
  /**
   * Options the command no longer takes, by name without `--`, each with what to use instead: typed
   * (alone or `--name=…`), one is a usage error with that text, never run. Left out of help and completion.
   */
  retiredOptions?: Readonly<Record<string, string>>;
  positionals?: P;
  examples?: readonly Example[];
  run(input: CommandInput<O, P>, context: Context): Promise<CommandOutcome> | CommandOutcome;
}

export interface Command<Context> {
  readonly kind: "command";
  readonly name: string;
  readonly summary: string;
  readonly description: string | undefined;
  readonly options: OptionSpecs;
  readonly retiredOptions: Readonly<Record<string, string>>;
  readonly positionals: readonly PositionalSpec[];
  readonly examples: readonly Example[];
  run(
    input: { options: Record<string, unknown>; args: Record<string, unknown> },
    context: Context,
  ): Promise<CommandOutcome> | CommandOutcome;
}

export interface CommandGroup<Context> {
  readonly kind: "group";
  readonly name: string;
  readonly summary: string;
  readonly commands: readonly CommandNode<Context>[];
}

export type CommandNode<Context> = Command<Context> | CommandGroup<Context>;

export interface Failure {
  /** 1 for a failure, 2 for bad usage, or the program's own (bee: 3 a lost claim; floot: 75 locked). */
  exitCode: number;
  /** snake_case, as in `--json` errors: `usage`, `failed`, `state_dir_locked`. */
  code: string;
  message: string;
}

export interface Program<Context> {
  /** The bin: `bee`, `floot`. */
  name: string;
  /** From the app's package.json. */
  version: string;
  summary: string;
  commands: readonly CommandNode<Context>[];
  /** Closing lines of the top-level help: exit codes, environment. */
  notes?: string;
  /** An error `run` threw, as an exit code and a message; undefined leaves the default (1, its message). */
  describeFailure?: (error: unknown) => Failure | undefined;
}

/**
 * Declares a command with its options and positionals typed from the table:
 * `defineCommand<Ctx>()({name, options: {json: {type: "boolean", …}}, run({options}) {options.json}})`.
 */
export function defineCommand<Context>() {
  return <const O extends OptionSpecs = Record<never, never>, const P extends readonly PositionalSpec[] = []>(
    spec: CommandSpec<Context, O, P>,
  ): Command<Context> => {
    checkPositionals(spec.name, spec.positionals ?? []);
    return {
      kind: "command",
      name: spec.name,
      summary: spec.summary,
      description: spec.description,
      options: spec.options ?? {},
      retiredOptions: spec.retiredOptions ?? {},
      positionals: spec.positionals ?? [],
      examples: spec.examples ?? [],
      run: spec.run as Command<Context>["run"],
    };
  };
}

export function defineGroup<Context>(
  name: string,
  summary: string,
  commands: readonly CommandNode<Context>[],
): CommandGroup<Context> {
  return { kind: "group", name, summary, commands };
}

function checkPositionals(command: string, positionals: readonly PositionalSpec[]): void {
  positionals.forEach((positional, index) => {
    const last = index === positionals.length - 1;
    if (positional.variadic && !last) throw new Error(`${command}: only the last positional may be variadic`);
    const next = positionals[index + 1];
    if (positional.optional && next && !next.optional) {
      throw new Error(`${command}: a required positional cannot follow an optional one`);
    }
  });
}

/** Every command of the table with its path (`["session", "create"]`), depth first, in table order. */
export function commandPaths<Context>(
  nodes: readonly CommandNode<Context>[],
  prefix: readonly string[] = [],
): { path: string[]; command: Command<Context> }[] {
  return nodes.flatMap((node) =>
    node.kind === "command"
      ? [{ path: [...prefix, node.name], command: node }]
      : commandPaths(node.commands, [...prefix, node.name]),
  );
}

/** Every group of the table with its path, the program's root (`[]`) first. */
export function groupPaths<Context>(
  nodes: readonly CommandNode<Context>[],
  prefix: readonly string[] = [],
): { path: string[]; children: readonly CommandNode<Context>[] }[] {
  return [
    { path: [...prefix], children: nodes },
    ...nodes.flatMap((node) =>
      node.kind === "group" ? groupPaths(node.commands, [...prefix, node.name]) : [],
    ),
  ];
}
