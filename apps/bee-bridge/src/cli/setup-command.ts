import { defineCommand, defineGroup } from "@bridgeworks/cli";
import { describePlan, planClaudeSetup, writePlannedFiles } from "../setup-claude.js";
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
  },
  examples: [
    { command: "bee setup claude", summary: "for every project of this user" },
    { command: "bee setup claude --scope project --dry-run", summary: "show what this project would get" },
  ],
  run({ options }, context) {
    const planned = planClaudeSetup({
      scope: options.scope ?? "user",
      dryRun: options["dry-run"],
      launcher: context.launcher(),
      env: context.env,
      homeDir: context.homeDir,
      cwd: context.cwd,
      serverEnv: options.channel ? { BEE_CHANNEL: "1" } : {},
    });
    if (options["dry-run"]) {
      context.stdout(describePlan(planned));
      return;
    }
    writePlannedFiles(planned);
    for (const file of planned) {
      context.stdout(`${file.before === file.after ? "unchanged" : "wrote"} ${file.path}\n`);
    }
  },
});

export const setupGroup = defineGroup<BeeContext>("setup", "install bee into an agent", [claudeCommand]);
