import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { parseArgs } from "node:util";
import { BoardError } from "@bridgeworks/board";
import {
  agentsCommand,
  type CliIo,
  claimCommand,
  completeCommand,
  exitCodes,
  listCommand,
  migrateCommand,
  postCommand,
} from "./board-cli.js";
import { runBridge } from "./bridge.js";
import { runSessionStartHook, systemHookIo } from "./hook.js";
import { describeError, UsageError } from "./log.js";
import { describePlan, planClaudeSetup, type SetupScope, writePlannedFiles } from "./setup-claude.js";

export const beeVersion = "0.0.0";

const usage = `usage: bee <command>

  bee bridge                                   MCP stdio server for one Claude Code session
  bee hook session-start                       SessionStart command hook (reads the hook JSON on stdin)
  bee post --to <agent|*> [--kind K] [--from human[:name]] <body>
  bee list [--json] [--since CURSOR] [--limit N]
  bee agents [--json]
  bee claim <id> [--as NAME] [--json]
  bee complete <id> [--as NAME] [--result TEXT] [--json]
  bee board migrate [--json]                   create or migrate the board's schema, print the versions
  bee setup claude [--scope user|project] [--dry-run] [--channel]

Board commands take --board PATH|URL (default: BEE_BOARD, else $XDG_STATE_HOME/bee/board.db).
A postgres:// URL puts the board on PostgreSQL; keep its password in BEE_BOARD, not on the command line.
Exit codes: 0 done; 1 failed (board error, retire failed); 2 bad usage; 3 a claim lost the race.
`;

/** Runs one `bee` command; resolves with the exit code (the bridge keeps running after it resolves). */
export async function main(argv: readonly string[]): Promise<number | "serving"> {
  const [command, ...rest] = argv;
  const io: CliIo = { env: process.env, homeDir: homedir(), stdout: (text) => process.stdout.write(text) };
  try {
    switch (command) {
      case "bridge":
        noArguments(rest, "bridge");
        await runBridge(beeVersion);
        return "serving";
      case "hook":
        if (rest[0] !== "session-start" || rest.length > 1) {
          throw new UsageError("hook", "the only hook is: bee hook session-start");
        }
        return await runSessionStartHook(systemHookIo());
      case "post": {
        const { values, positionals } = parse(rest, {
          to: "string",
          kind: "string",
          from: "string",
          board: "string",
          json: "boolean",
        });
        const body = positionals[0];
        return await postCommand(io, {
          ...pick(values, "to", "kind", "from", "board"),
          json: flag(values),
          body,
        });
      }
      case "list": {
        const { values } = parse(
          rest,
          { since: "string", limit: "string", board: "string", json: "boolean" },
          0,
        );
        return await listCommand(io, { ...pick(values, "since", "limit", "board"), json: flag(values) });
      }
      case "agents": {
        const { values } = parse(rest, { board: "string", json: "boolean" }, 0);
        return await agentsCommand(io, { ...pick(values, "board"), json: flag(values) });
      }
      case "claim": {
        const { values, positionals } = parse(rest, { as: "string", board: "string", json: "boolean" });
        return await claimCommand(io, {
          ...pick(values, "as", "board"),
          json: flag(values),
          id: positionals[0],
        });
      }
      case "complete": {
        const { values, positionals } = parse(rest, {
          as: "string",
          result: "string",
          board: "string",
          json: "boolean",
        });
        return await completeCommand(io, {
          ...pick(values, "as", "result", "board"),
          json: flag(values),
          id: positionals[0],
        });
      }
      case "board": {
        if (rest[0] !== "migrate")
          throw new UsageError("board", "the only board command is: bee board migrate");
        const { values } = parse(rest.slice(1), { board: "string", json: "boolean" }, 0);
        return await migrateCommand(io, { ...pick(values, "board"), json: flag(values) });
      }
      case "setup":
        return setupCommand(rest);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        process.stderr.write(usage);
        return command === undefined ? exitCodes.usage : exitCodes.ok;
      default:
        throw new UsageError("command", `unknown command ${JSON.stringify(command)}`);
    }
  } catch (error) {
    return reportFailure(error);
  }
}

function setupCommand(rest: string[]): number {
  if (rest[0] !== "claude") throw new UsageError("setup", "the only target is: bee setup claude");
  const { values } = parse(rest.slice(1), { scope: "string", "dry-run": "boolean", channel: "boolean" }, 0);
  const scope = pick(values, "scope").scope ?? "user";
  if (scope !== "user" && scope !== "project") {
    throw new UsageError("--scope", `must be user or project, got ${JSON.stringify(scope)}`);
  }
  const planned = planClaudeSetup({
    scope: scope as SetupScope,
    dryRun: flag(values, "dry-run"),
    launcher: { command: process.execPath, args: [realpathSync(process.argv[1] ?? "")] },
    env: process.env,
    homeDir: homedir(),
    cwd: process.cwd(),
    serverEnv: flag(values, "channel") ? { BEE_CHANNEL: "1" } : {},
  });
  if (flag(values, "dry-run")) {
    process.stdout.write(describePlan(planned));
  } else {
    writePlannedFiles(planned);
    for (const file of planned) {
      process.stdout.write(`${file.before === file.after ? "unchanged" : "wrote"} ${file.path}\n`);
    }
  }
  return exitCodes.ok;
}

type OptionTypes = Record<string, "string" | "boolean">;

function parse(args: string[], options: OptionTypes, maxPositionals = 1) {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      options: Object.fromEntries(Object.entries(options).map(([name, type]) => [name, { type }])),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const message = describeError(error);
    const option = /'(--?[^'\s]+)/.exec(message)?.[1] ?? "arguments";
    throw new UsageError(option, message);
  }
  if (parsed.positionals.length > maxPositionals) {
    throw new UsageError("arguments", `unexpected ${JSON.stringify(parsed.positionals[maxPositionals])}`);
  }
  return parsed as { values: ParsedValues; positionals: string[] };
}

type ParsedValues = Record<string, string | boolean | undefined>;

function pick<Name extends string>(values: ParsedValues, ...names: Name[]): Record<Name, string | undefined> {
  const picked = {} as Record<Name, string | undefined>;
  for (const name of names) {
    const value = values[name];
    picked[name] = typeof value === "string" ? value : undefined;
  }
  return picked;
}

function flag(values: ParsedValues, name = "json"): boolean {
  return values[name] === true;
}

function noArguments(rest: string[], command: string): void {
  if (rest.length > 0) throw new UsageError(command, `takes no arguments, got ${JSON.stringify(rest[0])}`);
}

function reportFailure(error: unknown): number {
  if (error instanceof UsageError) {
    process.stderr.write(`bee: ${error.message}\n`);
    return exitCodes.usage;
  }
  if (error instanceof BoardError) {
    process.stderr.write(
      `bee: ${error.message}${error.retryable ? " (the board is busy; try again)" : ""}\n`,
    );
    return error.code === "invalid_argument" ? exitCodes.usage : exitCodes.failed;
  }
  process.stderr.write(`bee: ${describeError(error)}\n`);
  return exitCodes.failed;
}
