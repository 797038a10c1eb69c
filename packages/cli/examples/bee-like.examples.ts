// The README's example, type-checked (scripts/readme-examples.mjs keeps the README's copy equal).

//#region program
import { defineCommand, defineGroup, integer, type Program, runProgram, UsageError } from "@bridgeworks/cli";

interface Context {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const command = defineCommand<Context>();

const list = command({
  name: "list",
  summary: "list the actions",
  options: {
    limit: { type: "string", placeholder: "N", summary: "at most N (1-500)", parse: integer(1, 500) },
    json: { type: "boolean", summary: "print JSON" },
  },
  run({ options }, context) {
    // options.limit: number | undefined, options.json: boolean; checked before run is called.
    context.stdout(options.json ? "[]\n" : `no actions (limit ${options.limit ?? "none"})\n`);
  },
});

const claim = command({
  name: "claim",
  summary: "claim an action",
  positionals: [{ name: "id", summary: "the action's id" }],
  examples: [{ command: "demo claim act_1", summary: "claims act_1" }],
  run({ args }) {
    if (!args.id.startsWith("act_")) throw new UsageError("<id>", "must look like act_…");
    return 3; // this program's own exit code: someone else had it
  },
});

const program: Program<Context> = {
  name: "demo",
  version: "1.0.0",
  summary: "a demonstration",
  commands: [list, defineGroup("action", "one action", [claim])],
};

const context: Context = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};
process.exitCode = await runProgram(program, process.argv.slice(2), context, context);
//#endregion program
