import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { bundlePath, runBee } from "./helpers.js";
import {
  type InteractiveClaude,
  type LogEntry,
  sessionEventTool,
  startInteractiveClaude,
  waitOnPromptSteps,
  waitTool,
} from "./interactive-claude.mjs";
import { toolNames } from "./real-claude.js";

// `bee setup claude --scope project`, then INTERACTIVE claude under tmux with no --mcp-config and no
// --settings: only the workspace's .mcp.json, .claude/settings.json and .claude/settings.local.json apply.
// `claude -p` starts a project's .mcp.json servers unapproved (setup-claude-real.test.ts), so only an
// interactive session shows whether the local approval works.

let session: InteractiveClaude | undefined;

afterEach(async () => {
  // Ends the tmux server, claude and the bridge by pid, then removes the environment.
  await session?.close();
  session = undefined;
});

/** The first line of Claude Code 2.1.332's dialog for an unapproved .mcp.json server. */
const approvalDialog = "New MCP server found in this project: bee";
/** The footer under claude's input box: shown only when it is at its prompt, not during a dialog. */
const atPrompt = (pane: string) => pane.includes("(shift+tab to cycle)");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const bridgeStarted = (entry: LogEntry) => entry.message === "bridge started";

/** What `bee setup claude --scope project` wrote to `.claude/settings.local.json`. */
let setupApproval: string | undefined;

/**
 * Runs `bee setup claude --scope project` in the workspace (checking what it wrote), then starts
 * interactive claude there with none of the config flags. `approval: "removed"` deletes the
 * `enabledMcpjsonServers` key bee setup wrote to `.claude/settings.local.json`; anything else stays.
 */
async function startProjectScoped(
  steps: Parameters<typeof startInteractiveClaude>[0]["steps"],
  approval: "kept" | "removed",
) {
  setupApproval = undefined;
  session = await startInteractiveClaude({
    steps,
    config: "workspace",
    async beforeStart({ environment }) {
      const setup = environment.spawn(process.execPath, [
        bundlePath,
        "setup",
        "claude",
        "--scope",
        "project",
      ]);
      const exit = await setup.exited;
      expect(exit.code, setup.stderr()).toBe(0);
      const localSettings = join(environment.workspace, ".claude", "settings.local.json");
      expect(setup.stdout()).toBe(
        [
          join(environment.workspace, ".mcp.json"),
          join(environment.workspace, ".claude", "settings.json"),
          localSettings,
        ]
          .map((path) => `wrote ${path}\n`)
          .join(""),
      );
      setupApproval = readFileSync(localSettings, "utf8");
      if (approval === "removed") {
        const json = JSON.parse(setupApproval) as Record<string, unknown>;
        delete json.enabledMcpjsonServers;
        writeFileSync(localSettings, `${JSON.stringify(json, null, 2)}\n`);
      }
    },
  });
  return session;
}

function localSettingsText(current: InteractiveClaude): string | undefined {
  const path = join(current.environment.workspace, ".claude", "settings.local.json");
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}

/** `.claude/settings.local.json` parsed, or undefined while it is missing or half written. */
function localSettings(current: InteractiveClaude): Record<string, unknown> | undefined {
  try {
    return JSON.parse(localSettingsText(current) ?? "");
  } catch {
    return undefined;
  }
}

/** The pane, the bridge log and the local settings, for failure messages. */
function describeState(current: InteractiveClaude): string {
  let pane: string;
  try {
    pane = current
      .pane()
      .replace(/[ \t]+$/gm, "")
      .trimEnd();
  } catch (error) {
    pane = `(capture-pane failed: ${(error as Error).message})`;
  }
  return [
    `pane:\n${pane}`,
    `bridge log:\n${current
      .log()
      .map((entry) => JSON.stringify(entry))
      .join("\n")}`,
    `.claude/settings.local.json:\n${localSettingsText(current) ?? "(none)"}`,
  ].join("\n");
}

/** Polls the bridge log and the pane every 200 ms until `check` returns a value; fails with the state. */
async function poll<T>(
  current: InteractiveClaude,
  check: (pane: string) => T | undefined | false,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check(current.pane());
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs} ms\n${describeState(current)}`);
    await sleep(200);
  }
}

/** Asserts for `ms` that the bridge does not start and that `paneHolds` stays true of the pane. */
async function holdWithoutBridge(
  current: InteractiveClaude,
  ms: number,
  paneHolds: (pane: string) => boolean,
) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const pane = current.pane();
    expect(current.log().some(bridgeStarted), `the bridge started\n${describeState(current)}`).toBe(false);
    expect(paneHolds(pane), `the pane changed\n${describeState(current)}`).toBe(true);
    await sleep(200);
  }
}

/**
 * Waits for the bridge to start while watching the pane every 200 ms: the approval dialog must never
 * show (if it does, this fails at once). Then waits for claude's prompt. Returns the `bridge started` line.
 */
async function bridgeStartsWithoutDialog(current: InteractiveClaude): Promise<LogEntry> {
  const started = await poll(
    current,
    (pane) => {
      if (pane.includes(approvalDialog))
        throw new Error(`claude asked for approval\n${describeState(current)}`);
      return current.log().find(bridgeStarted);
    },
    60_000,
    "the bridge's `bridge started`",
  );
  const pane = await poll(current, (text) => atPrompt(text) && text, 30_000, "claude's prompt");
  expect(pane, describeState(current)).not.toContain(approvalDialog);
  expect(pane, describeState(current)).not.toMatch(/MCP server/);
  expect(started.claudePid, describeState(current)).toBe(current.claudePid);
  return started;
}

function userText(body: unknown): string {
  const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  return JSON.stringify(messages);
}

function anthropicRequests(current: InteractiveClaude) {
  return current.double.requests.filter((request) => request.api === "anthropic");
}

test("bee setup claude --scope project: interactive claude starts the approved bridge without a dialog; the wait tool reaches it, the session-event tool stays hidden", async () => {
  const current = await startProjectScoped(waitOnPromptSteps("wait now"), "kept");
  await bridgeStartsWithoutDialog(current);

  await sleep(1000);
  await current.type("wait now");
  const call = await current
    .waitForLog(
      (entry) => entry.message === "tools/call" && entry.tool === "bee_wait_action",
      30_000,
      "the bridge's tools/call for bee_wait_action",
    )
    .catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${describeState(current)}`);
    });
  expect(call.toolUseId).toMatch(/^toolu_/);
  const requests = anthropicRequests(current);
  expect(requests.length).toBeGreaterThan(0);
  for (const request of requests) {
    expect(toolNames(request.body)).toContain(waitTool);
    expect(toolNames(request.body)).not.toContain(sessionEventTool);
  }
  expect(current.pane()).not.toContain(approvalDialog);
  // The approval that did it: the key Claude Code itself writes when the user approves (see the control).
  expect(JSON.parse(setupApproval ?? "")).toEqual({ enabledMcpjsonServers: ["bee"] });
});

test("bee setup claude --scope project: /clear retires the identity through the project's hooks alone; the bridge lives on", async () => {
  const current = await startProjectScoped(
    [{ repeat: true, response: { events: [{ type: "text", text: "ok" }] } }],
    "kept",
  );
  const { beeEnv, double } = current;
  const startLine = await bridgeStartsWithoutDialog(current);
  const started = await current.waitForLog((entry) => entry.message === "identity registered", 30_000);
  await sleep(1000);
  await current.type("hello there");
  await double.waitForRequest((request) => userText(request.body).includes("hello there"), {
    timeoutMs: 30_000,
  });
  await sleep(1500);

  await current.type("/clear");
  const retired = await current
    .waitForLog((entry) => entry.message === "identity retired", 30_000, "the bridge's identity retired")
    .catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${describeState(current)}`);
    });
  expect(retired.retired).toBe(started.identity);

  await sleep(1500);
  await current.type("after the clear");
  const next = await double.waitForRequest((request) => userText(request.body).includes("after the clear"), {
    timeoutMs: 30_000,
  });
  // The SessionStart mcp_tool hook from .claude/settings.json answered with the new identity.
  expect(userText(next.body)).toContain(`bee identity: ${String(retired.current)}`);
  // Setup installs the mcp_tool hook and the command-hook fallback: they join one retire.
  const log = current.log();
  expect(log.filter((entry) => entry.message === "session event").map((entry) => entry.source)).toEqual([
    "clear",
  ]);
  expect(log.filter((entry) => entry.message === "identity retired")).toHaveLength(1);

  const agents = await runBee(["agents", "--json"], { PATH: process.env.PATH ?? "", ...beeEnv });
  expect(agents.code, agents.stderr).toBe(0);
  expect(
    (JSON.parse(agents.stdout) as Array<{ identity: string; status: string }>).map((agent) => [
      agent.identity,
      agent.status,
    ]),
  ).toEqual([
    [started.identity, "retired"],
    [retired.current, "active"],
  ]);
  for (const request of anthropicRequests(current))
    expect(toolNames(request.body)).not.toContain(sessionEventTool);
  expect(log.filter(bridgeStarted).map((entry) => entry.pid)).toEqual([startLine.pid]);
});

// The control: the same setup without the approval. Claude Code 2.1.332 then shows its approval dialog
// before the prompt, with "Continue without using this MCP server" preselected, and starts nothing
// while it waits. What it writes for each choice is exactly the approval bee setup writes, or a rejection.
test.each<[string, "approve" | "reject"]>([
  ["choosing 'Use this MCP server' starts it and writes the very approval bee setup writes", "approve"],
  ["Esc rejects it: claude runs without the bridge", "reject"],
])(
  "bee setup claude --scope project without the local approval: claude asks about bee and starts nothing meanwhile; %s",
  async (_label, choice) => {
    const current = await startProjectScoped(
      [{ repeat: true, response: { events: [{ type: "text", text: "ok" }] } }],
      "removed",
    );
    expect(localSettings(current)).not.toHaveProperty("enabledMcpjsonServers");

    const dialog = await poll(
      current,
      (pane) => {
        if (current.log().some(bridgeStarted))
          throw new Error(`the unapproved bridge started\n${describeState(current)}`);
        if (atPrompt(pane))
          throw new Error(`claude reached its prompt without asking\n${describeState(current)}`);
        return pane.includes(approvalDialog) && pane;
      },
      60_000,
      "claude's approval dialog",
    );
    expect(dialog).toMatch(
      /^ {4}Use this MCP server\n {4}Use this and all future MCP servers in this project\n {2}❯ Continue without using this MCP server$/m,
    );
    // A generous bound: the approved bridge starts within about a second of claude's start.
    await holdWithoutBridge(current, 10_000, (pane) => pane.includes(approvalDialog) && !atPrompt(pane));
    expect(anthropicRequests(current)).toEqual([]);

    if (choice === "approve") {
      current.press("Up");
      await sleep(300);
      current.press("Up");
      await poll(current, (pane) => /^ {2}❯ Use this MCP server$/m.test(pane), 5000, "the selection moved");
      current.press("Enter");
      const started = await poll(
        current,
        () => current.log().find(bridgeStarted),
        30_000,
        "`bridge started`",
      );
      expect(started.claudePid).toBe(current.claudePid);
      await poll(
        current,
        (pane) => atPrompt(pane) && !pane.includes(approvalDialog),
        30_000,
        "claude's prompt",
      );
      const written = await poll(
        current,
        () => {
          const json = localSettings(current);
          return json?.enabledMcpjsonServers !== undefined && json;
        },
        10_000,
        "claude's approval in .claude/settings.local.json",
      );
      expect(written).toEqual(JSON.parse(setupApproval ?? ""));
    } else {
      current.press("Escape");
      await poll(
        current,
        (pane) => atPrompt(pane) && !pane.includes(approvalDialog),
        30_000,
        "claude's prompt",
      );
      await holdWithoutBridge(current, 10_000, atPrompt);
      const written = await poll(
        current,
        () => {
          const json = localSettings(current);
          return json?.disabledMcpjsonServers !== undefined && json;
        },
        10_000,
        "claude's rejection in .claude/settings.local.json",
      );
      expect(written).toEqual({ disabledMcpjsonServers: ["bee"] });
      await current.type("hello there");
      const request = await current.double.waitForRequest(
        (entry) => entry.api === "anthropic" && userText(entry.body).includes("hello there"),
        { timeoutMs: 30_000 },
      );
      expect(toolNames(request.body).filter((name) => name.startsWith("mcp__bee__"))).toEqual([]);
      expect(current.log()).toEqual([]);
    }
  },
);
