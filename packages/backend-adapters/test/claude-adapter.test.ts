import { describe, expect, test } from "vitest";
import {
  type ClaudeFileSystem,
  claudeConfigDir,
  claudeProjectDirName,
  claudeTranscriptPath,
  createClaudeAdapter,
} from "../src/index.js";

const sessionId = "4c770da2-74d2-433f-abfb-1663ee3863ee";

function fakeFs(existing: string[] = [], links: Record<string, string> = {}) {
  const checked: string[] = [];
  const fs: ClaudeFileSystem = {
    exists: (path) => {
      checked.push(path);
      return existing.includes(path);
    },
    realpath: (path) => links[path] ?? path,
  };
  return { fs, checked };
}

const baseEnv = {
  PATH: "/usr/bin",
  HOME: "/home/u",
  CLAUDE_CONFIG_DIR: "/home/u/.claude-alt",
  UNSET: undefined,
};

const gate = {
  command: "/opt/node's/bin/node",
  args: ["/srv/floot/gate-hook.mjs"],
  env: { FLOOT_MCP_SOCKET: "/state/bridges/g3/mcp.sock", FLOOT_MCP_TOKEN: "f".repeat(64) },
  deadlineMs: 30_000,
};

describe("the pre-tool gate in the turn's own settings", () => {
  test("a PreToolUse hook on every tool that blocks when it fails, hooks forced on; the token only in env", () => {
    const { fs } = fakeFs();
    const prepared = createClaudeAdapter({ baseEnv, fs }).prepareTurn({
      prompt: "p",
      cwd: "/w",
      conversation: { id: sessionId, established: false },
      gate,
    });
    const { args, env } = prepared.launch;
    expect(args).not.toContain("--bare");
    const settings = JSON.parse(args[args.indexOf("--settings") + 1]!);
    expect(settings).toEqual({
      disableAllHooks: false,
      hooks: {
        PreToolUse: [
          {
            matcher: "*",
            hooks: [
              {
                type: "command",
                command:
                  `NODE_OPTIONS= '/opt/node'\\''s/bin/node' '/srv/floot/gate-hook.mjs' '30000'; s=$?; ` +
                  `if [ "$s" -ne 0 ] && [ "$s" -ne 2 ]; then echo "floot: this tool call was NOT run: the ` +
                  `gate hook failed (exit $s)" >&2; exit 2; fi; exit $s`,
                timeout: 60,
                onFailure: "block",
              },
            ],
          },
        ],
        // The same program reports each finished call; whatever it exits with, nothing is blocked.
        PostToolUse: [
          {
            matcher: "*",
            hooks: [
              {
                type: "command",
                command: `NODE_OPTIONS= '/opt/node'\\''s/bin/node' '/srv/floot/gate-hook.mjs' '30000' >/dev/null 2>&1; exit 0`,
                timeout: 60,
              },
            ],
          },
        ],
      },
    });
    expect(env).toMatchObject(gate.env);
    expect(args.join(" ")).not.toContain(gate.env.FLOOT_MCP_TOKEN);
  });

  test("declares Read, Grep, Glob and LS effect-free", () => {
    expect(createClaudeAdapter().effectFreeTools).toEqual(["Read", "Grep", "Glob", "LS"]);
  });
});

describe("Claude Code argv and environment", () => {
  test("first turn: --session-id, prompt as one stream-json line on stdin, the user's environment", () => {
    const { fs, checked } = fakeFs();
    const prepared = createClaudeAdapter({ baseEnv, env: { EXTRA: "1" }, fs }).prepareTurn({
      prompt: "hello --not-a-flag",
      cwd: "/work/ws",
      conversation: { id: sessionId, established: false },
    });
    expect(checked).toEqual([`/home/u/.claude-alt/projects/-work-ws/${sessionId}.jsonl`]);
    expect(prepared).toMatchObject({ backend: "claude", conversationId: sessionId, resuming: false });
    expect(prepared.launch).toEqual({
      command: "claude",
      args: [
        "-p",
        "--output-format",
        "stream-json",
        "--input-format",
        "stream-json",
        "--verbose",
        "--session-id",
        sessionId,
      ],
      cwd: "/work/ws",
      env: { PATH: "/usr/bin", HOME: "/home/u", CLAUDE_CONFIG_DIR: "/home/u/.claude-alt", EXTRA: "1" },
      stdin: `${JSON.stringify({
        type: "user",
        message: { role: "user", content: [{ type: "text", text: "hello --not-a-flag" }] },
      })}\n`,
      installHint: "Install Claude Code with: npm install -g @anthropic-ai/claude-code",
    });
  });

  test("--resume once the transcript exists under the physical cwd's project folder", () => {
    const transcript = `/home/u/.claude-alt/projects/-real-ws/${sessionId}.jsonl`;
    const { fs } = fakeFs([transcript], { "/link/ws": "/real/ws" });
    const prepared = createClaudeAdapter({ baseEnv, fs }).prepareTurn({
      prompt: "again",
      cwd: "/link/ws",
      conversation: { id: sessionId, established: false },
    });
    expect(prepared.resuming).toBe(true);
    expect(prepared.launch.args).toContain("--resume");
    expect(prepared.launch.args).not.toContain("--session-id");
    expect(prepared.launch.cwd).toBe("/link/ws");
  });

  test("an established conversation resumes even without a transcript, so the CLI reports it missing", () => {
    const { fs } = fakeFs();
    const prepared = createClaudeAdapter({ baseEnv, fs }).prepareTurn({
      prompt: "again",
      cwd: "/work/ws",
      conversation: { id: sessionId, established: true },
    });
    expect(prepared.launch.args.slice(6, 8)).toEqual(["--resume", sessionId]);
  });

  test("without a conversation a new session id is minted and known before spawn", () => {
    const prepared = createClaudeAdapter({
      baseEnv,
      fs: fakeFs().fs,
      randomUUID: () => "00000000-0000-4000-8000-000000000001",
    }).prepareTurn({ prompt: "hi", cwd: "/w" });
    expect(prepared.conversationId).toBe("00000000-0000-4000-8000-000000000001");
    expect(prepared.launch.args).toContain("00000000-0000-4000-8000-000000000001");
  });

  test("rejects a conversation id that is not a UUID", () => {
    expect(() =>
      createClaudeAdapter({ baseEnv, fs: fakeFs().fs }).prepareTurn({
        prompt: "hi",
        cwd: "/w",
        conversation: { id: "--resume", established: false },
      }),
    ).toThrow(/conversation.id must be a UUID/);
  });

  test("the MCP mount: --mcp-config, --strict-mcp-config, enumerated tools, MCP_TOOL_TIMEOUT", () => {
    const prepared = createClaudeAdapter({
      baseEnv,
      fs: fakeFs().fs,
      model: "claude-sonnet-4-5",
      includePartialMessages: true,
      allowedTools: ["Bash"],
      extraArgs: ["--permission-mode", "dontAsk"],
    }).prepareTurn({
      prompt: "hi",
      cwd: "/w",
      conversation: { id: sessionId, established: false },
      mcp: {
        mount: {
          command: "/usr/bin/node",
          args: ["shim.mjs", "/run/g3/floot.sock"],
          env: { FLOOT_TOKEN: "secret-turn-token" },
        },
        tools: ["requestSecret", "echo"],
        toolTimeoutMs: 900_000,
      },
    });
    expect(prepared.launch.args.slice(6)).toEqual([
      "--include-partial-messages",
      "--session-id",
      sessionId,
      "--model",
      "claude-sonnet-4-5",
      "--mcp-config",
      JSON.stringify({
        mcpServers: {
          floot: {
            type: "stdio",
            command: "/usr/bin/node",
            args: ["shim.mjs", "/run/g3/floot.sock"],
            // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code expands ${NAME} in MCP config env
            env: { FLOOT_TOKEN: "${FLOOT_TOKEN}" },
            alwaysLoad: true,
          },
        },
      }),
      "--strict-mcp-config",
      "--allowedTools",
      "mcp__floot__requestSecret,mcp__floot__echo,Bash",
      "--permission-mode",
      "dontAsk",
    ]);
    expect(prepared.launch.env.MCP_TOOL_TIMEOUT).toBe("900000");
    expect(prepared.launch.env.FLOOT_TOKEN).toBe("secret-turn-token");
    expect(prepared.launch.args.join(" ")).not.toContain("secret-turn-token");
  });

  test("the permission prompt tool: --permission-prompt-tool on the mount, never in --allowedTools", () => {
    const adapter = createClaudeAdapter({ baseEnv, fs: fakeFs().fs, allowedTools: ["Bash(npm test:*)"] });
    const mount = { command: "node", args: [] };
    const args = adapter.prepareTurn({
      prompt: "x",
      cwd: "/w",
      mcp: {
        mount,
        tools: ["requestSecret", "permissionPrompt"],
        toolTimeoutMs: 1000,
        permissionPromptTool: "permissionPrompt",
      },
    }).launch.args;
    const at = (flag: string) => args[args.indexOf(flag) + 1];
    expect(at("--permission-prompt-tool")).toBe("mcp__floot__permissionPrompt");
    expect(at("--allowedTools")).toBe("mcp__floot__requestSecret,Bash(npm test:*)");
    expect(() =>
      adapter.prepareTurn({
        prompt: "x",
        cwd: "/w",
        mcp: {
          mount,
          tools: ["requestSecret"],
          toolTimeoutMs: 1000,
          permissionPromptTool: "permissionPrompt",
        },
      }),
    ).toThrow(/not one of the mount's tools/);
  });

  test("rejects MCP names that cannot be spelled in a tool name", () => {
    const adapter = createClaudeAdapter({ baseEnv, fs: fakeFs().fs });
    const mount = { command: "node", args: [] };
    expect(() =>
      adapter.prepareTurn({ prompt: "x", cwd: "/w", mcp: { mount, tools: ["a,b"], toolTimeoutMs: 1000 } }),
    ).toThrow(/mcp.tools entry/);
    expect(() =>
      adapter.prepareTurn({
        prompt: "x",
        cwd: "/w",
        mcp: { serverName: "fl.oot", mount, tools: [], toolTimeoutMs: 1000 },
      }),
    ).toThrow(/mcp.serverName/);
  });
});

describe("Claude Code transcript location (measured against claude 2.1.332)", () => {
  test("every UTF-16 unit that is not an ASCII letter or digit becomes '-'", () => {
    expect(claudeProjectDirName("/tmp/rec/ws")).toBe("-tmp-rec-ws");
    expect(claudeProjectDirName("/tmp/rec/w.s_x-y z@é+1")).toBe("-tmp-rec-w-s-x-y-z---1");
  });

  test("a name over 200 characters is cut and suffixed with the path's hash", () => {
    const cwd = `/tmp/rec/${Array.from({ length: 10 }, (_, index) => `segment_with.dots-${String(index).padStart(2, "0")}`).join("/")}`;
    expect(claudeProjectDirName(cwd)).toBe(
      "-tmp-rec-segment-with-dots-00-segment-with-dots-01-segment-with-dots-02-segment-with-dots-03-segment-with-dots-04-segment-with-dots-05-segment-with-dots-06-segment-with-dots-07-segment-with-dots-08-se-qbokxe",
    );
  });

  test("the config dir is $CLAUDE_CONFIG_DIR, else ~/.claude", () => {
    expect(claudeConfigDir({ CLAUDE_CONFIG_DIR: "/c", HOME: "/h" })).toBe("/c");
    expect(claudeConfigDir({ HOME: "/h" })).toBe("/h/.claude");
    expect(claudeTranscriptPath("/c", "/w", sessionId)).toBe(`/c/projects/-w/${sessionId}.jsonl`);
  });
});
