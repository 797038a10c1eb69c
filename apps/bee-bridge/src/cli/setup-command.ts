import { defineCommand, defineGroup, integer, UsageError } from "@bridgeworks/cli";
import { ActionRecipient, DeciderName } from "@bridgeworks/protocol";
import { describePlan, type PlannedFile, planClaudeSetup, writePlannedFiles } from "../setup-claude.js";
import { planCodexSetup } from "../setup-codex.js";
import { defaultDecider } from "./approval-commands.js";
import { parseValue } from "./board-options.js";
import { defaultEscalateTimeoutSeconds } from "./bridge-commands.js";
import type { BeeContext } from "./context.js";

const claudeCommand = defineCommand<BeeContext>()({
  name: "claude",
  summary: "install the bridge, its /clear hooks and the deny rule into Claude Code's settings",
  options: {
    scope: {
      type: "string",
      choices: ["user", "project"],
      summary: "user: ~/.claude.json and settings.json; project: .mcp.json and .claude/ (default user)",
    },
    "dry-run": { type: "boolean", summary: "print the changes, write nothing" },
    channel: { type: "boolean", summary: "also push new actions as Claude Code channel notifications" },
    escalate: {
      type: "boolean",
      summary: "put every permission prompt to the board as an approval (PermissionRequest hook)",
    },
    "escalate-to": {
      type: "string",
      placeholder: "human:NAME|AGENT",
      summary: "whom --escalate asks (default human:$USER)",
    },
    decider: {
      type: "string",
      placeholder: "NAME",
      multiple: true,
      summary: "who may decide (human, human:NAME or an agent's name; default: whom it asks)",
    },
    "escalate-timeout": {
      type: "string",
      placeholder: "SECONDS",
      summary: `deny a prompt nobody decided after SECONDS (default ${defaultEscalateTimeoutSeconds})`,
      parse: integer(1, 86_400),
    },
  },
  examples: [
    { command: "bee setup claude", summary: "for every project of this user" },
    { command: "bee setup claude --scope project --dry-run", summary: "show what this project would get" },
    {
      command: "bee setup claude --escalate --escalate-to lead --decider lead",
      summary: "a worker whose prompts the lead agent decides",
    },
  ],
  run({ options }, context) {
    const escalating = options.escalate || options["escalate-to"] !== undefined;
    const to = parseValue(
      ActionRecipient,
      options["escalate-to"] ?? defaultDecider(context.env),
      "--escalate-to",
    );
    if (to === "*")
      throw new UsageError("--escalate-to", "ask one person (human:NAME) or one lead agent, not *");
    const planned = planClaudeSetup({
      scope: options.scope ?? "user",
      dryRun: options["dry-run"],
      launcher: context.launcher(),
      env: context.env,
      homeDir: context.homeDir,
      cwd: context.cwd,
      serverEnv: options.channel ? { BEE_CHANNEL: "1" } : {},
      escalate: escalating
        ? {
            to,
            deciders: options.decider.map((decider) => parseValue(DeciderName, decider, "--decider")),
            timeoutSeconds: options["escalate-timeout"] ?? defaultEscalateTimeoutSeconds,
          }
        : undefined,
    });
    applyPlan(planned, options["dry-run"], context);
    if (options.channel && !options["dry-run"]) context.stderr(channelAdvice);
  },
});

/** Prints the diff (dry run), or writes the files and says which changed. */
function applyPlan(planned: readonly PlannedFile[], dryRun: boolean, context: BeeContext): void {
  if (dryRun) {
    context.stdout(describePlan(planned));
    return;
  }
  writePlannedFiles(planned);
  for (const file of planned) {
    context.stdout(`${file.before === file.after ? "unchanged" : "wrote"} ${file.path}\n`);
  }
}

/** What bee cannot write for --channel: Claude Code takes channels only from its own command line. */
const channelAdvice =
  "bee setup claude --channel: the bridge now pushes new actions; Claude Code 2.1.332 acts on them only\n" +
  "when started with --dangerously-load-development-channels server:bee (a confirmation dialog at startup)\n" +
  "from a claude.ai login whose organization allows channels; with an API key it skips them\n" +
  '("channels feature is not currently available" in its --debug-file log) and bee_wait_action alone wakes it.\n';

const codexCommand = defineCommand<BeeContext>()({
  name: "codex",
  summary: "install the bridge into Codex's config.toml ([mcp_servers.bee], its tools approved)",
  description:
    "Codex has no /clear hook and no channels: a Codex session keeps one identity for its life (its\n" +
    "lease ends with its bridge) and learns of new actions only through bee_wait_action.",
  options: { "dry-run": { type: "boolean", summary: "print the changes, write nothing" } },
  examples: [{ command: "bee setup codex", summary: "for every Codex session of this user" }],
  run({ options }, context) {
    const planned = planCodexSetup({
      launcher: context.launcher(),
      env: context.env,
      homeDir: context.homeDir,
    });
    applyPlan(planned, options["dry-run"], context);
  },
});

export const setupGroup = defineGroup<BeeContext>("setup", "install bee into an agent", [
  claudeCommand,
  codexCommand,
]);
