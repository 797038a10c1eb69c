import { defineCommand, defineGroup, integer, keyValue, type Program, UsageError } from "../src/index.js";

/** What the fixture's commands saw, so a test can check `run` got typed, checked values. */
export interface Seen {
  calls: { command: string; input: unknown }[];
}

const command = defineCommand<Seen>();

export class LockedError extends Error {}

export const create = command({
  name: "create",
  summary: "create a session",
  options: {
    backend: { type: "string", summary: "the CLI it runs", choices: ["claude", "codex"], required: true },
    workspace: { type: "string", summary: "its folder", placeholder: "DIR", complete: "directory" },
    env: {
      type: "string",
      summary: "an environment variable",
      placeholder: "K=V",
      multiple: true,
      parse: keyValue,
    },
    port: { type: "string", summary: "a port", placeholder: "N", parse: integer(0, 65_535) },
    json: { type: "boolean", summary: "print JSON" },
  },
  retiredOptions: { "env-file": "is now --env-from FILE" },
  examples: [{ command: "demo session create --backend claude", summary: "a Claude session" }],
  run(input, seen) {
    // Compile-time checks of the inferred types: these assignments fail to typecheck if inference breaks.
    const backend: "claude" | "codex" = input.options.backend;
    const env: [string, string][] = input.options.env;
    const port: number | undefined = input.options.port;
    const json: boolean = input.options.json;
    const workspace: string | undefined = input.options.workspace;
    seen.calls.push({ command: "session create", input: { backend, env, port, json, workspace } });
  },
});

export const send = command({
  name: "send",
  summary: "send a prompt",
  positionals: [
    { name: "session", summary: "the session" },
    { name: "prompt", summary: "the prompt's words", variadic: true },
  ],
  options: { follow: { type: "boolean", summary: "follow the turn", short: "f" } },
  run({ args, options }, seen) {
    const session: string = args.session;
    const prompt: string[] = args.prompt;
    seen.calls.push({ command: "send", input: { session, prompt, follow: options.follow } });
    return 7;
  },
});

export const show = command({
  name: "show",
  summary: "show one thing",
  positionals: [{ name: "id", summary: "its id", optional: true }],
  options: { json: { type: "boolean", summary: "print JSON" } },
  run({ args }, seen) {
    const id: string | undefined = args.id;
    if (id === "locked") throw new LockedError("the state dir is locked");
    if (id === "broken") throw new Error("it broke\nacross two lines");
    if (id === "refused") throw new UsageError("<id>", "is refused by run");
    seen.calls.push({ command: "show", input: { id } });
  },
});

export const demo: Program<Seen> = {
  name: "demo",
  version: "1.2.3",
  summary: "a demonstration program",
  commands: [defineGroup("session", "sessions", [create]), send, show],
  notes: "exit codes: 0 ok, 1 failed, 2 usage, 75 locked",
  describeFailure: (error) =>
    error instanceof LockedError
      ? { exitCode: 75, code: "state_dir_locked", message: error.message }
      : undefined,
};
