import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ModelDouble, startModelDouble } from "@bridgeworks/model-double";
import {
  createIsolatedEnvironment,
  DOUBLE_API_KEY,
  type IsolatedEnvironment,
} from "@bridgeworks/test-harness";
import { afterEach, expect, test } from "vitest";
import { bundlePath, eventually, runBee } from "./helpers.js";
import { beeEnvironment, sessionEventTool, waitTool } from "./real-claude.js";

let double: ModelDouble | undefined;
let environment: IsolatedEnvironment | undefined;
let tmuxSocket: string | undefined;
let sessionPids: number[] = [];

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

afterEach(async () => {
  if (tmuxSocket) {
    // The tmux server runs on its own socket; end it by its pid.
    try {
      const pid = Number(
        execFileSync("tmux", ["-L", tmuxSocket, "display-message", "-p", "#{pid}"], { encoding: "utf8" }),
      );
      if (pid > 0) process.kill(pid, "SIGTERM");
    } catch {}
  }
  // claude and its bridge outlive the tmux server for a moment; end them by pid before removing their dirs.
  for (const pid of sessionPids) if (alive(pid)) process.kill(pid, "SIGTERM");
  await eventually(() => sessionPids.every((pid) => !alive(pid)) || undefined, 5000).catch(() => {
    for (const pid of sessionPids) if (alive(pid)) process.kill(pid, "SIGKILL");
  });
  sessionPids = [];
  await environment?.dispose();
  await double?.close();
  environment = undefined;
  double = undefined;
  tmuxSocket = undefined;
});

function tmux(...args: string[]): string {
  return execFileSync("tmux", ["-L", tmuxSocket!, ...args], { encoding: "utf8" });
}

async function type(text: string): Promise<void> {
  tmux("send-keys", "-t", "bee", "-l", text);
  await new Promise((resolve) => setTimeout(resolve, 800));
  tmux("send-keys", "-t", "bee", "Enter");
}

function userText(body: unknown): string {
  const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  return JSON.stringify(messages);
}

function logEntries(path: string): Array<Record<string, unknown>> {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const mcpToolHook = {
  type: "mcp_tool",
  server: "bee",
  tool: "bee_session_event",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the hook's interpolation syntax.
  input: { session_id: "${session_id}", source: "${source}" },
  timeout: 10,
};
const commandHook = {
  type: "command",
  command: `${process.execPath} ${bundlePath} hook session-start`,
  timeout: 10,
};

interface InteractiveSession {
  beeEnv: {
    BEE_BOARD: string;
    BEE_RUN_DIR: string;
    BEE_AGENT: string;
    BEE_LOG_LEVEL: string;
    BEE_LOG_FILE: string;
  };
  double: ModelDouble;
}

/** Starts interactive claude in a detached tmux session on its own socket, with the bridge and `hook` on /clear. */
async function startInteractiveClaude(
  steps: Parameters<typeof startModelDouble>[0]["steps"],
  hook: object,
): Promise<InteractiveSession> {
  const modelDouble = await startModelDouble({ steps });
  double = modelDouble;
  environment = createIsolatedEnvironment({ modelUrl: modelDouble.url });
  const env = environment;
  const beeEnv = beeEnvironment(env.root);
  const seed = JSON.stringify({
    hasCompletedOnboarding: true,
    theme: "dark",
    customApiKeyResponses: { approved: [DOUBLE_API_KEY.slice(-20)] },
    projects: { [env.workspace]: { hasTrustDialogAccepted: true } },
  });
  writeFileSync(join(env.claudeConfigDir, ".claude.json"), seed);
  writeFileSync(join(env.home, ".claude.json"), seed);
  const mcpConfig = join(env.root, "mcp.json");
  writeFileSync(
    mcpConfig,
    JSON.stringify({
      mcpServers: {
        bee: { type: "stdio", command: process.execPath, args: [bundlePath, "bridge"], env: beeEnv },
      },
    }),
  );
  const settings = join(env.root, "settings.json");
  writeFileSync(
    settings,
    JSON.stringify({
      permissions: { deny: [sessionEventTool] },
      hooks: {
        SessionStart: [
          {
            matcher: "clear",
            hooks: [hook],
          },
        ],
      },
    }),
  );

  tmuxSocket = `bee-test-${process.pid}-${Date.now()}`;
  const exports = Object.entries({ ...env.env, BEE_RUN_DIR: beeEnv.BEE_RUN_DIR })
    .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
    .join(" ");
  tmux(
    "new-session",
    "-d",
    "-s",
    "bee",
    "-x",
    "200",
    "-y",
    "50",
    `cd ${JSON.stringify(env.workspace)} && env -i ${exports} claude --mcp-config ${mcpConfig} --strict-mcp-config --settings ${settings} --allowedTools ${waitTool}`,
  );

  return { beeEnv, double: modelDouble };
}

test.each([
  ["the mcp_tool hook", mcpToolHook, ["clear"]],
  ["only the command-hook fallback", commandHook, []],
])(
  "interactive claude: /clear retires the identity through %s; the bridge lives on",
  async (_path, hook, sessionEvents) => {
    const { beeEnv, double } = await startInteractiveClaude(
      [{ repeat: true, response: { events: [{ type: "text", text: "ok" }] } }],
      hook,
    );
    const started = await eventually(
      () => logEntries(beeEnv.BEE_LOG_FILE).find((entry) => entry.message === "identity registered"),
      60_000,
    );
    const startLine = logEntries(beeEnv.BEE_LOG_FILE).find((entry) => entry.message === "bridge started");
    const bridgePid = startLine?.pid;
    sessionPids = [startLine?.claudePid, bridgePid].filter((pid): pid is number => typeof pid === "number");
    expect(sessionPids).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await type("hello there");
    await double.waitForRequest((request) => userText(request.body).includes("hello there"), {
      timeoutMs: 30_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));

    await type("/clear");
    const retired = await eventually(
      () => logEntries(beeEnv.BEE_LOG_FILE).find((entry) => entry.message === "identity retired"),
      30_000,
    );
    expect(retired.retired).toBe(started.identity);
    const events = logEntries(beeEnv.BEE_LOG_FILE).filter((entry) => entry.message === "session event");
    expect(events.map((entry) => entry.source)).toEqual(sessionEvents);

    const agents = JSON.parse(
      (await runBee(["agents", "--json"], { PATH: process.env.PATH ?? "", ...beeEnv })).stdout,
    ) as Array<{
      identity: string;
      status: string;
    }>;
    expect(agents.map((agent) => [agent.identity, agent.status])).toEqual([
      [started.identity, "retired"],
      [retired.current, "active"],
    ]);

    await new Promise((resolve) => setTimeout(resolve, 1500));
    await type("after the clear");
    const next = await double.waitForRequest(
      (request) => userText(request.body).includes("after the clear"),
      {
        timeoutMs: 30_000,
      },
    );
    expect(userText(next.body)).toContain(`bee identity: ${String(retired.current)}`);
    for (const request of double.requests.filter((entry) => entry.api === "anthropic")) {
      const names = ((request.body as { tools?: Array<{ name: string }> }).tools ?? []).map(
        (tool) => tool.name,
      );
      expect(names).not.toContain(sessionEventTool);
    }
    const starts = logEntries(beeEnv.BEE_LOG_FILE).filter((entry) => entry.message === "bridge started");
    expect(starts.map((entry) => entry.pid)).toEqual([bridgePid]);
  },
);

test("interactive claude: Esc during a wait cancels it in the bridge", async () => {
  const { beeEnv } = await startInteractiveClaude(
    [
      {
        match: { lastUserTextIncludes: "wait now" },
        response: {
          events: [
            {
              type: "tool_use",
              id: "toolu_esc_wait",
              nameFrom: { equals: waitTool },
              input: { timeoutSeconds: 60 },
            },
          ],
        },
      },
      { repeat: true, response: { events: [{ type: "text", text: "ok" }] } },
    ],
    mcpToolHook,
  );
  const startLine = await eventually(
    () => logEntries(beeEnv.BEE_LOG_FILE).find((entry) => entry.message === "bridge started"),
    60_000,
  );
  sessionPids = [startLine.claudePid, startLine.pid].filter((pid): pid is number => typeof pid === "number");
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await type("wait now");
  await eventually(
    () =>
      logEntries(beeEnv.BEE_LOG_FILE).find(
        (entry) => entry.message === "tools/call" && entry.tool === "bee_wait_action",
      ),
    30_000,
  );
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const pressedAt = Date.now();
  tmux("send-keys", "-t", "bee", "Escape");
  const cancelled = await eventually(
    () => logEntries(beeEnv.BEE_LOG_FILE).find((entry) => entry.message === "tool call cancelled"),
    10_000,
  );
  // Bounded generously here; the wait itself would have run for 60 s.
  expect(Date.parse(String(cancelled.time)) - pressedAt).toBeLessThan(5000);
});
