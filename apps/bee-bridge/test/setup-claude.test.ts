import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { createSandbox, runBee, type Sandbox } from "./helpers.js";

let sandbox: Sandbox;
let configDir: string;
let env: Record<string, string>;

beforeEach(() => {
  sandbox = createSandbox();
  configDir = join(sandbox.home, ".claude");
  mkdirSync(configDir);
  env = { ...sandbox.env, CLAUDE_CONFIG_DIR: configDir };
});

afterEach(() => sandbox.dispose());

const unrelatedSettings = {
  model: "opus",
  permissions: { allow: ["Bash(ls:*)"], deny: ["Read(./secrets/**)"] },
  hooks: {
    SessionStart: [{ matcher: "startup", hooks: [{ type: "command", command: "echo started" }] }],
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "/usr/local/bin/guard" }] }],
  },
};
const unrelatedConfig = {
  hasCompletedOnboarding: true,
  mcpServers: { other: { type: "stdio", command: "other-server", args: [] } },
};

// biome-ignore lint/suspicious/noExplicitAny: the tests walk arbitrary settings JSON.
type AnyJson = Record<string, any>;

function readJson(path: string): AnyJson {
  return JSON.parse(readFileSync(path, "utf8")) as AnyJson;
}

describe("bee setup claude", () => {
  test("user scope merges into existing settings and servers, keeps them intact, and a second run changes nothing", async () => {
    const settingsPath = join(configDir, "settings.json");
    const configPath = join(configDir, ".claude.json");
    writeFileSync(settingsPath, JSON.stringify(unrelatedSettings, null, 2));
    writeFileSync(configPath, JSON.stringify(unrelatedConfig));

    const first = await runBee(["setup", "claude"], env);
    expect(first.code, first.stderr).toBe(0);
    const settings = readJson(settingsPath);
    const config = readJson(configPath);

    expect(config.hasCompletedOnboarding).toBe(true);
    expect(config.mcpServers.other).toEqual(unrelatedConfig.mcpServers.other);
    expect(config.mcpServers.bee).toMatchObject({
      type: "stdio",
      args: [expect.stringMatching(/bee\.mjs$/), "bridge"],
      alwaysLoad: true,
    });

    expect(settings.model).toBe("opus");
    expect(settings.permissions.allow).toEqual(["Bash(ls:*)"]);
    expect(settings.permissions.deny).toEqual(["Read(./secrets/**)", "mcp__bee__bee_session_event"]);
    expect(settings.hooks.PreToolUse).toEqual(unrelatedSettings.hooks.PreToolUse);
    expect(settings.hooks.SessionStart[0]).toEqual(unrelatedSettings.hooks.SessionStart[0]);
    expect(settings.hooks.SessionStart[1]).toEqual({
      matcher: "clear",
      hooks: [
        {
          type: "mcp_tool",
          server: "bee",
          tool: "bee_session_event",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the hook's interpolation syntax.
          input: { session_id: "${session_id}", source: "${source}" },
          timeout: 10,
        },
        { type: "command", command: expect.stringMatching(/bee\.mjs hook session-start$/), timeout: 10 },
      ],
    });

    const settingsText = readFileSync(settingsPath, "utf8");
    const configText = readFileSync(configPath, "utf8");
    const second = await runBee(["setup", "claude"], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(`unchanged ${configPath}\nunchanged ${settingsPath}\n`);
    expect(readFileSync(settingsPath, "utf8")).toBe(settingsText);
    expect(readFileSync(configPath, "utf8")).toBe(configText);
  });

  test("--dry-run prints the diff and writes nothing", async () => {
    const settingsPath = join(configDir, "settings.json");
    writeFileSync(settingsPath, JSON.stringify(unrelatedSettings, null, 2));
    const result = await runBee(["setup", "claude", "--dry-run"], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`+++ ${settingsPath}`);
    expect(result.stdout).toContain('+      "mcp__bee__bee_session_event"');
    expect(result.stdout).toContain("--- /dev/null");
    expect(readFileSync(settingsPath, "utf8")).toBe(JSON.stringify(unrelatedSettings, null, 2));
  });

  test("project scope writes .mcp.json, the project's hooks and the local approval of the server", async () => {
    const project = join(sandbox.root, "project");
    mkdirSync(project);
    const result = await runBeeIn(project, ["setup", "claude", "--scope", "project"]);
    expect(result.code, result.stderr).toBe(0);
    expect(readJson(join(project, ".mcp.json")).mcpServers.bee.args.at(-1)).toBe("bridge");
    expect(readJson(join(project, ".claude", "settings.json")).permissions.deny).toEqual([
      "mcp__bee__bee_session_event",
    ]);
    expect(readJson(join(project, ".claude", "settings.local.json")).enabledMcpjsonServers).toEqual(["bee"]);
  });

  test("project scope drops an earlier refusal of bee (it would win over the approval), keeping the rest", async () => {
    const project = join(sandbox.root, "project");
    mkdirSync(join(project, ".claude"), { recursive: true });
    const local = join(project, ".claude", "settings.local.json");
    // What Claude Code writes when its dialog's "continue without" was chosen, next to the user's own.
    writeFileSync(
      local,
      JSON.stringify({ enabledMcpjsonServers: ["docs"], disabledMcpjsonServers: ["bee", "old"] }),
    );
    const first = await runBeeIn(project, ["setup", "claude", "--scope", "project"]);
    expect(first.code, first.stderr).toBe(0);
    expect(readJson(local)).toEqual({
      enabledMcpjsonServers: ["docs", "bee"],
      disabledMcpjsonServers: ["old"],
    });

    writeFileSync(local, JSON.stringify({ disabledMcpjsonServers: ["bee"] }));
    const second = await runBeeIn(project, ["setup", "claude", "--scope", "project"]);
    expect(second.code, second.stderr).toBe(0);
    expect(readJson(local)).toEqual({ enabledMcpjsonServers: ["bee"] });

    writeFileSync(local, JSON.stringify({ disabledMcpjsonServers: "bee" }));
    const broken = await runBeeIn(project, ["setup", "claude", "--scope", "project"]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("disabledMcpjsonServers");
    expect(readJson(local)).toEqual({ disabledMcpjsonServers: "bee" });
  });

  test("bad arguments and broken settings are refused by name", async () => {
    const scope = await runBee(["setup", "claude", "--scope", "global"], env);
    expect(scope.code).toBe(2);
    expect(scope.stderr).toContain("--scope: must be user or project");
    writeFileSync(join(configDir, "settings.json"), "{ not json");
    const broken = await runBee(["setup", "claude"], env);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(`${join(configDir, "settings.json")}: is not valid JSON`);
  });
});

async function runBeeIn(cwd: string, args: string[]) {
  const { execFile } = await import("node:child_process");
  const { bundlePath } = await import("./helpers.js");
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [bundlePath, ...args], { cwd, env }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe("bee setup claude --escalate", () => {
  test("adds one PermissionRequest hook for every tool, keeps others' hooks, and a second run changes nothing", async () => {
    const settingsPath = join(configDir, "settings.json");
    const others = {
      hooks: { PermissionRequest: [{ matcher: "Write", hooks: [{ type: "command", command: "audit" }] }] },
    };
    writeFileSync(settingsPath, JSON.stringify(others));
    const args = [
      "setup",
      "claude",
      "--escalate",
      "--escalate-to",
      "lead",
      "--decider",
      "lead",
      "--decider",
      "human:iain",
    ];
    const first = await runBee(args, env);
    expect(first.code, first.stderr).toBe(0);
    const settings = readJson(settingsPath);
    expect(settings.hooks.PermissionRequest).toEqual([
      others.hooks.PermissionRequest[0],
      {
        hooks: [
          {
            type: "command",
            command: expect.stringMatching(
              /bee\.mjs hook permission-request --to lead --decider lead --decider human:iain --timeout 300$/,
            ),
            timeout: 330,
            statusMessage: "Asking lead on the bee board",
          },
        ],
      },
    ]);
    const text = readFileSync(settingsPath, "utf8");
    const again = await runBee(args, env);
    expect(again.stdout).toContain(`unchanged ${settingsPath}`);
    expect(readFileSync(settingsPath, "utf8")).toBe(text);

    // Asked again with another addressee, bee's hook is replaced where it is, not added twice.
    expect(
      (await runBee(["setup", "claude", "--escalate-to", "human:iain", "--escalate-timeout", "60"], env))
        .code,
    ).toBe(0);
    const changed = readJson(settingsPath).hooks.PermissionRequest as AnyJson[];
    expect(changed).toHaveLength(2);
    expect(changed[1]!.hooks).toEqual([
      expect.objectContaining({
        command: expect.stringMatching(/permission-request --to human:iain --timeout 60$/),
        timeout: 90,
      }),
    ]);
  });

  test("without --escalate nothing is put to the board; --escalate-to * and a bad decider are usage errors", async () => {
    expect((await runBee(["setup", "claude"], env)).code).toBe(0);
    expect(readJson(join(configDir, "settings.json")).hooks.PermissionRequest).toBeUndefined();
    const everyone = await runBee(["setup", "claude", "--escalate-to", "*"], env);
    expect([everyone.code, everyone.stderr]).toEqual([
      2,
      "bee setup claude: --escalate-to: ask one person (human:NAME) or one lead agent, not * (see 'bee setup claude --help')\n",
    ]);
    const badDecider = await runBee(["setup", "claude", "--escalate", "--decider", "agent:x#00000000"], env);
    expect(badDecider.code).toBe(2);
    expect(badDecider.stderr).toContain("--decider: must be human, human:<name> or an agent name");
  });
});

describe("bee setup claude --channel", () => {
  test("turns the bridge's pushes on and says on stderr what only claude's own command line can add", async () => {
    const result = await runBee(["setup", "claude", "--channel"], env);
    expect(result.code, result.stderr).toBe(0);
    expect(readJson(join(configDir, ".claude.json")).mcpServers.bee.env).toEqual({ BEE_CHANNEL: "1" });
    expect(result.stderr).toContain("--dangerously-load-development-channels server:bee");
    expect(result.stderr).toContain("channels feature is not currently available");
    expect((await runBee(["setup", "claude"], env)).stderr).toBe("");
  });
});
