import { describe, expect, test } from "vitest";
import { createCodexAdapter } from "../src/index.js";

const baseEnv = { PATH: "/usr/bin", CODEX_HOME: "/home/u/.codex" };
const threadId = "01a22b07-69dd-7ce2-bd49-e4ec8226c97c";

describe("Codex argv and environment", () => {
  test("first turn: exec --json with the prompt on stdin; the thread id comes later", () => {
    const prepared = createCodexAdapter({ baseEnv, env: { EXTRA: "1" } }).prepareTurn({
      prompt: "hello\n-- not a flag",
      cwd: "/work/ws",
    });
    expect(prepared).toMatchObject({ backend: "codex", conversationId: undefined, resuming: false });
    expect(prepared.launch).toEqual({
      command: "codex",
      args: ["exec", "--json", "--skip-git-repo-check", "-"],
      cwd: "/work/ws",
      env: { PATH: "/usr/bin", CODEX_HOME: "/home/u/.codex", EXTRA: "1" },
      stdin: "hello\n-- not a flag",
      installHint: "Install Codex with: npm install -g @openai/codex",
    });
  });

  test("later turns: exec resume <thread_id>, with the session's model and -c overrides", () => {
    const prepared = createCodexAdapter({
      baseEnv,
      model: "gpt-5.1-codex",
      configOverrides: ['model_reasoning_effort="low"'],
      skipGitRepoCheck: false,
    }).prepareTurn({ prompt: "again", cwd: "/w", conversation: { id: threadId, established: true } });
    expect(prepared).toMatchObject({ conversationId: threadId, resuming: true });
    expect(prepared.launch.args).toEqual([
      "exec",
      "resume",
      "--json",
      "-m",
      "gpt-5.1-codex",
      "-c",
      'model_reasoning_effort="low"',
      threadId,
      "-",
    ]);
  });

  test("the MCP mount as mcp_servers.<name> TOML overrides; its variables in codex's environment, not argv", () => {
    const token = "f".repeat(64);
    const prepared = createCodexAdapter({ baseEnv }).prepareTurn({
      prompt: "x",
      cwd: "/w",
      mcp: {
        mount: {
          command: "/usr/bin/node",
          args: ["shim.mjs", '/run/with "quotes"\\and\nnewline.sock'],
          env: { FLOOT_MCP_TOKEN: token, "ODD.KEY": "v", NODE_OPTIONS: "" },
        },
        tools: ["requestSecret", "echo"],
        toolTimeoutMs: 900_500,
      },
    });
    const overrides = prepared.launch.args.filter((_, index, args) => args[index - 1] === "-c");
    expect(overrides).toEqual([
      'mcp_servers.floot.command="/usr/bin/node"',
      'mcp_servers.floot.args=["shim.mjs", "/run/with \\"quotes\\"\\\\and\\nnewline.sock"]',
      'mcp_servers.floot.env_vars=["FLOOT_MCP_TOKEN", "ODD.KEY"]',
      'mcp_servers.floot.env={ NODE_OPTIONS = "" }',
      'mcp_servers.floot.enabled_tools=["requestSecret", "echo"]',
      'mcp_servers.floot.default_tools_approval_mode="approve"',
      "mcp_servers.floot.tool_timeout_sec=901",
    ]);
    expect(prepared.launch.env).toMatchObject({ FLOOT_MCP_TOKEN: token, "ODD.KEY": "v" });
    expect(prepared.launch.args.join(" ")).not.toContain(token);
  });

  test("the pre-tool gate: a PreToolUse hook for every tool, hooks forced on, run without persisted trust", () => {
    const gate = {
      command: "/usr/bin/node",
      args: ["/srv/gate-hook.mjs"],
      env: { FLOOT_MCP_SOCKET: "/s/mcp.sock", FLOOT_MCP_TOKEN: "e".repeat(64) },
      deadlineMs: 20_000,
    };
    const prepared = createCodexAdapter({ baseEnv }).prepareTurn({
      prompt: "x",
      cwd: "/w",
      conversation: { id: threadId, established: true },
      gate,
    });
    const { args, env } = prepared.launch;
    const hookCommand =
      `NODE_OPTIONS= '/usr/bin/node' '/srv/gate-hook.mjs' '20000'; s=$?; if [ "$s" -ne 0 ] && [ "$s" -ne 2 ]; ` +
      `then echo "floot: this tool call was NOT run: the gate hook failed (exit $s)" >&2; exit 2; fi; exit $s`;
    const reportCommand = `NODE_OPTIONS= '/usr/bin/node' '/srv/gate-hook.mjs' '20000' >/dev/null 2>&1; exit 0`;
    expect(args.filter((_, index, all) => all[index - 1] === "-c")).toEqual([
      `hooks.PreToolUse=[{ hooks = [{ type = "command", command = ${JSON.stringify(hookCommand)}, timeout = 50 }] }]`,
      `hooks.PostToolUse=[{ hooks = [{ type = "command", command = ${JSON.stringify(reportCommand)}, timeout = 50 }] }]`,
    ]);
    expect(args).toEqual(expect.arrayContaining(["--enable", "hooks", "--dangerously-bypass-hook-trust"]));
    expect(args.slice(-2)).toEqual([threadId, "-"]);
    expect(env).toMatchObject(gate.env);
    expect(args.join(" ")).not.toContain(gate.env.FLOOT_MCP_TOKEN);
    expect(createCodexAdapter().effectFreeTools).toEqual(["view_image", "get_goal"]);
  });

  test("rejects a thread id that could be read as a flag", () => {
    expect(() =>
      createCodexAdapter({ baseEnv }).prepareTurn({
        prompt: "x",
        cwd: "/w",
        conversation: { id: "--last", established: true },
      }),
    ).toThrow(/not a Codex thread id/);
  });
});
