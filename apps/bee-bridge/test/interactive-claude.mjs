// Interactive `claude` (the pinned binary) in a detached tmux session on its own `-L` socket, in an
// isolated HOME/CLAUDE_CONFIG_DIR against the model double, with the built `bee bridge` as its MCP
// server. Shared by test/claude-tmux.test.ts and bench/bee.bench.mjs; plain JavaScript because the
// bench runs on plain node (the packages' dist). Types: interactive-claude.d.mts.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DOUBLE_API_KEY, doubledEnvironments } from "@bridgeworks/test-harness";

export const bundlePath = fileURLToPath(new URL("../bundle/bee.mjs", import.meta.url));
export const waitTool = "mcp__bee__bee_wait_action";
export const sessionEventTool = "mcp__bee__bee_session_event";

/** The bridge's environment inside an isolated environment rooted at `root`, as agent `alpha`. */
export function beeEnvironment(root) {
  return {
    BEE_BOARD: join(root, "board.db"),
    BEE_RUN_DIR: join(root, "run"),
    BEE_AGENT: "alpha",
    BEE_LOG_LEVEL: "debug",
    BEE_LOG_FILE: join(root, "bridge.log"),
  };
}

/** Writes `<root>/mcp.json` naming the bee bundle as the `bee` stdio server; returns its path. */
export function writeBeeMcpConfig(root, beeEnv) {
  const path = join(root, "mcp.json");
  writeFileSync(
    path,
    JSON.stringify({
      mcpServers: {
        bee: { type: "stdio", command: process.execPath, args: [bundlePath, "bridge"], env: beeEnv },
      },
    }),
  );
  return path;
}

/** The primary /clear path: Claude Code calls the hidden `bee_session_event` on the running bridge. */
export const mcpToolHook = {
  type: "mcp_tool",
  server: "bee",
  tool: "bee_session_event",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the hook's interpolation syntax.
  input: { session_id: "${session_id}", source: "${source}" },
  timeout: 10,
};

/** The fallback /clear path: `bee hook session-start` POSTs /retire to the bridge's control server. */
export const commandHook = {
  type: "command",
  command: `${process.execPath} ${bundlePath} hook session-start`,
  timeout: 10,
};

/** The JSON lines of a log file written so far (a line still being written is left out). */
export function readLogEntries(path) {
  if (!existsSync(path)) return [];
  const lines = readFileSync(path, "utf8").split("\n");
  lines.pop();
  return lines.filter(Boolean).map((line) => JSON.parse(line));
}

/** Polls `check` every 20 ms until it returns something other than undefined/false. */
export async function waitFor(check, timeoutMs, what = "condition") {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signal(pid, name) {
  try {
    process.kill(pid, name);
  } catch {}
}

/**
 * Starts the double with `steps`, then interactive claude in the isolated environment's workspace.
 * `config: "flags"` (the default): the bridge comes from `--mcp-config --strict-mcp-config`, `hook` on
 * /clear and the deny from `--settings`. Either way `--allowedTools` lets the model call the wait tool.
 * `config: "workspace"`: claude gets none of these flags, so only what `beforeStart` put in place applies
 * (e.g. `bee setup claude --scope project`); bee's variables are then in claude's own environment
 * (`environment.env`), which the bridge inherits. `beforeStart(session)` runs before claude starts.
 * `close()` ends the tmux server, claude and the bridge by pid; call it in a `finally`/`afterEach`.
 */
export async function startInteractiveClaude({
  steps,
  hook = mcpToolHook,
  config = "flags",
  beforeStart,
  extraArgs = [],
  beeEnvExtra = {},
}) {
  const doubled = doubledEnvironments();
  const { double, environment } = await doubled.start({ steps });
  const beeEnv = { ...beeEnvironment(environment.root), ...beeEnvExtra };
  // In workspace mode the server entry carries no env: the bridge inherits bee's variables from claude.
  if (config === "workspace") Object.assign(environment.env, beeEnv);
  const socket = `bee-${process.pid}-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`;
  const tmux = (...args) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
  const log = () => readLogEntries(beeEnv.BEE_LOG_FILE);
  let claudePid;
  let closed = false;

  const session = {
    double,
    environment,
    beeEnv,
    socket,
    tmux,
    log,
    /** The pid of claude itself (the pane runs it with exec); undefined until it is started. */
    get claudePid() {
      return claudePid;
    },
    waitForLog: (predicate, timeoutMs, what = "bridge log line") =>
      waitFor(() => log().find(predicate), timeoutMs, what),
    /** Types `text` literally, then Enter a moment later (claude's input needs the pause). */
    async type(text) {
      tmux("send-keys", "-t", "bee", "-l", text);
      await new Promise((resolve) => setTimeout(resolve, 800));
      tmux("send-keys", "-t", "bee", "Enter");
    },
    press(key) {
      tmux("send-keys", "-t", "bee", key);
    },
    /** The pane's text (its last `lines` lines of history included), for assertions and failure messages. */
    pane(lines = 200) {
      return tmux("capture-pane", "-p", "-J", "-t", "bee", "-S", `-${lines}`);
    },
    async close() {
      if (closed) return;
      closed = true;
      // claude, and the bridge(s) it started, as far as known: the pane runs claude itself (exec).
      const pids = new Set(claudePid ? [claudePid] : []);
      try {
        for (const entry of log())
          if (entry.message === "bridge started")
            for (const pid of [entry.pid, entry.claudePid]) if (typeof pid === "number") pids.add(pid);
      } catch {}
      let socketPath;
      try {
        // The tmux server runs on its own socket; end it by its pid (a signalled server leaves its socket file).
        const [serverPid, path] = tmux("display-message", "-p", "#{pid}\n#{socket_path}").trim().split("\n");
        socketPath = path;
        if (Number(serverPid) > 0) {
          pids.add(Number(serverPid));
          signal(Number(serverPid), "SIGTERM");
        }
      } catch {}
      // claude and its bridge outlive the tmux server for a moment; end them by pid before removing their dirs.
      for (const pid of pids) if (alive(pid)) signal(pid, "SIGTERM");
      await waitFor(() => [...pids].every((pid) => !alive(pid)), 5000).catch(() => {
        for (const pid of pids) if (alive(pid)) signal(pid, "SIGKILL");
      });
      if (socketPath) rmSync(socketPath, { force: true });
      await doubled.dispose();
    },
  };

  try {
    const seed = JSON.stringify({
      hasCompletedOnboarding: true,
      theme: "dark",
      customApiKeyResponses: { approved: [DOUBLE_API_KEY.slice(-20)] },
      projects: { [environment.workspace]: { hasTrustDialogAccepted: true } },
    });
    writeFileSync(join(environment.claudeConfigDir, ".claude.json"), seed);
    writeFileSync(join(environment.home, ".claude.json"), seed);
    let claudeArgs = [];
    if (config === "flags") {
      const mcpConfig = writeBeeMcpConfig(environment.root, beeEnv);
      const settings = join(environment.root, "settings.json");
      writeFileSync(
        settings,
        JSON.stringify({
          permissions: { deny: [sessionEventTool] },
          hooks: { SessionStart: [{ matcher: "clear", hooks: [hook] }] },
        }),
      );
      claudeArgs = ["--mcp-config", mcpConfig, "--strict-mcp-config", "--settings", settings];
    } else if (config !== "workspace") {
      throw new Error(`config must be "flags" or "workspace", not ${JSON.stringify(config)}`);
    }
    await beforeStart?.(session);
    const exports = Object.entries({ ...environment.env, BEE_RUN_DIR: beeEnv.BEE_RUN_DIR })
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
      [
        `cd ${JSON.stringify(environment.workspace)} && exec env -i ${exports} claude`,
        // A permission rule only, in both modes: auto mode's safety check runs on Anthropic's server, which
        // the double is not, so any other tool call stops at auto mode's "can't check actions" dialog.
        ...[...claudeArgs, ...extraArgs, "--allowedTools", waitTool].map((arg) => JSON.stringify(arg)),
      ].join(" "),
    );
    claudePid = Number(tmux("display-message", "-p", "-t", "bee", "#{pane_pid}")) || undefined;
  } catch (error) {
    await session.close();
    throw error;
  }
  return session;
}

/** Script steps: whenever the latest user text contains `marker`, the double calls bee_wait_action for 60 s; else "ok". */
export function waitOnPromptSteps(marker) {
  return [
    {
      match: { lastUserTextIncludes: marker },
      repeat: true,
      response: {
        events: [{ type: "tool_use", nameFrom: { equals: waitTool }, input: { timeoutSeconds: 60 } }],
      },
    },
    { repeat: true, response: { events: [{ type: "text", text: "ok" }] } },
  ];
}

const isWaitCall = (entry) => entry.message === "tools/call" && entry.tool === "bee_wait_action";
const isCancel = (entry) => entry.message === "tool call cancelled";

/**
 * Types `prompt` (the double answers it with a bee_wait_action call, see `waitOnPromptSteps`), waits for
 * the bridge's `tools/call` log line for it, lets the call settle `settleMs`, presses Escape and waits for
 * the bridge's `tool call cancelled`. `pressedAt` is taken right before tmux is asked to send the key;
 * `cancelledAt` is the log line's own time (both wall-clock ms).
 */
export async function escapeDuringWait(session, prompt, { settleMs = 1000, timeoutMs = 30_000 } = {}) {
  const callsBefore = session.log().filter(isWaitCall).length;
  const cancelsBefore = session.log().filter(isCancel).length;
  await session.type(prompt);
  const call = await waitFor(
    () => session.log().filter(isWaitCall)[callsBefore],
    timeoutMs,
    "the bridge's tools/call for bee_wait_action",
  );
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const pressedAt = Date.now();
  session.press("Escape");
  const cancelled = await waitFor(
    () => session.log().filter(isCancel)[cancelsBefore],
    timeoutMs,
    "the bridge's tool call cancelled",
  );
  return { call, cancelled, pressedAt, cancelledAt: Date.parse(String(cancelled.time)) };
}
