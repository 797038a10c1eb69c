import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { doubledEnvironments } from "@bridgeworks/test-harness";
import { afterEach, expect, test } from "vitest";
import { bundlePath, eventually, runBee } from "./helpers.js";
import {
  beeEnvironment,
  sessionEventTool,
  toolNames,
  waitThenAnswerScript,
  waitTool,
} from "./real-claude.js";

const doubled = doubledEnvironments();
afterEach(() => doubled.dispose());

type Case = {
  scope: "user" | "project";
  /** User scope without CLAUDE_CONFIG_DIR: `~/.claude.json` and `~/.claude/settings.json`. */
  withoutConfigDir?: boolean;
};

const cases: Array<[string, Case]> = [
  ["user scope (CLAUDE_CONFIG_DIR)", { scope: "user" }],
  ["user scope (HOME, no CLAUDE_CONFIG_DIR)", { scope: "user", withoutConfigDir: true }],
  ["project scope", { scope: "project" }],
];

test.each(cases)(
  "bee setup claude, %s: the real claude -p starts the bridge from the written config alone, offers the wait tool and hides the session-event tool",
  async (_label, { scope, withoutConfigDir }) => {
    const { double, environment } = await doubled.start(waitThenAnswerScript);
    // The server entry bee setup writes carries no env: the bridge inherits these from claude.
    const beeEnv = beeEnvironment(environment.root);
    Object.assign(environment.env, beeEnv);
    if (withoutConfigDir) delete environment.env.CLAUDE_CONFIG_DIR;

    const setup = environment.spawn(process.execPath, [bundlePath, "setup", "claude", "--scope", scope]);
    const setupExit = await setup.exited;
    expect(setupExit.code, setup.stderr()).toBe(0);
    const written = setup
      .stdout()
      .split("\n")
      .filter((line) => line.startsWith("wrote "))
      .map((line) => line.slice("wrote ".length));
    const claudeDir = withoutConfigDir ? join(environment.home, ".claude") : environment.claudeConfigDir;
    expect(written).toEqual(
      scope === "user"
        ? [
            withoutConfigDir ? join(environment.home, ".claude.json") : join(claudeDir, ".claude.json"),
            join(claudeDir, "settings.json"),
          ]
        : [
            join(environment.workspace, ".mcp.json"),
            join(environment.workspace, ".claude", "settings.json"),
            join(environment.workspace, ".claude", "settings.local.json"),
          ],
    );

    const debugFile = join(environment.root, "claude-debug.log");
    // `claude -p` starts a project's .mcp.json server without an approval ("non_interactive"), so the
    // project case checks .mcp.json and the project's settings, not the settings.local.json approval.
    // No --mcp-config, no --settings: only what bee setup wrote applies.
    const claude = environment.spawn("claude", [
      "-p",
      "wait for bee actions",
      "--allowedTools",
      waitTool,
      "--permission-mode",
      "dontAsk",
      "--output-format",
      "stream-json",
      "--verbose",
      "--debug-file",
      debugFile,
    ]);
    const describeState = () =>
      [
        `claude stderr:\n${claude.stderr()}`,
        `claude stdout:\n${claude.stdout()}`,
        `bridge log:\n${existsSync(beeEnv.BEE_LOG_FILE) ? readFileSync(beeEnv.BEE_LOG_FILE, "utf8") : "(none)"}`,
        `claude debug (mcp/hooks):\n${
          existsSync(debugFile)
            ? readFileSync(debugFile, "utf8")
                .split("\n")
                .filter((line) => /mcp|hook|bee/i.test(line))
                .join("\n")
            : "(none)"
        }`,
      ].join("\n");

    const first = await double
      .waitForRequest((request) => request.api === "anthropic" && toolNames(request.body).length > 0, {
        timeoutMs: 60_000,
      })
      .catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\n${describeState()}`);
      });
    expect(double.requests.filter((request) => request.api === "anthropic")[0]).toBe(first);
    const offered = toolNames(first.body);
    expect(offered, describeState()).toContain(waitTool);
    expect(offered).not.toContain(sessionEventTool);

    // The bridge claude started registered its identity on the same board and is serving the call.
    await eventually(
      () =>
        existsSync(beeEnv.BEE_LOG_FILE) && readFileSync(beeEnv.BEE_LOG_FILE, "utf8").includes('"tools/call"'),
      20_000,
    );
    const agents = await runBee(["agents", "--json"], { PATH: process.env.PATH ?? "", ...beeEnv });
    expect(agents.code, agents.stderr).toBe(0);
    expect(JSON.parse(agents.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "alpha", status: "active" })]),
    );

    // Unblock the wait so claude finishes on its own.
    const posted = await runBee(["post", "--to", "alpha", "--json", "please review"], {
      PATH: process.env.PATH ?? "",
      ...beeEnv,
    });
    expect(posted.code, posted.stderr).toBe(0);
    await double.waitForRequest((request) => request.response.status === 200 && request !== first, {
      timeoutMs: 60_000,
    });
    const exit = await claude.exited;
    expect(exit.code, describeState()).toBe(0);
  },
);
