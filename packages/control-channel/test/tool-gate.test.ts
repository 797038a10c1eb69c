import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { join } from "node:path";
import { Readable } from "node:stream";
import { fullBacklog, ProcessTracker } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import {
  defaultGateHookScriptPath,
  maxRequestBytes,
  mintToken,
  runToolGateHook,
  type SocketRequestHandler,
  sendSocketRequest,
  ToolGateHookExit,
  TurnTokenRegistry,
} from "../src/index.js";
import { useTempDirs } from "./helpers.js";
import {
  initializeRequestLine,
  openSocket,
  sendAndAwaitClose,
  type TurnContext,
  useMcpServers,
} from "./mcp-helpers.js";

const tempDir = useTempDirs();
const startServer = useMcpServers();
const processes = new ProcessTracker();
afterEach(() => processes.endAll());

const hookInput = {
  session_id: "1ac6392d-24f8-41b2-bf4f-492361f94cab",
  transcript_path: "/h/t.jsonl",
  cwd: "/ws",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "echo ran >> marker", description: "x" },
  tool_use_id: "toolu_1",
};

async function requestServer(handleRequest: SocketRequestHandler<TurnContext>) {
  const bridge = await startServer({ dir: join(await tempDir(), "g1"), generation: 1, handleRequest });
  return { ...bridge, token: bridge.tokens.issue({ turnId: "turn-a" }) };
}

function stderrSink() {
  let text = "";
  return { write: (chunk: string) => (text += chunk), text: () => text };
}

describe("the request channel beside MCP on a generation socket", () => {
  test("an authorized request reaches the handler with its turn's context; the answer comes back", async () => {
    const seen: unknown[] = [];
    const { server, token } = await requestServer((context, request) => {
      seen.push([context, request]);
      return { decision: "allow" };
    });
    const result = await sendSocketRequest({
      socketPath: server.socketPath,
      token,
      request: { type: "tool_gate", n: 1 },
      timeoutMs: 5_000,
    });
    expect(result).toEqual({ kind: "answered", answer: { decision: "allow" } });
    expect(seen).toEqual([[{ turnId: "turn-a" }, { type: "tool_gate", n: 1 }]]);
  });

  test("a connect refused with EAGAIN (a full listen backlog) is tried again, not taken for an absent server", async () => {
    const { server, token } = await requestServer(() => ({ decision: "allow" }));
    const busy = await fullBacklog(join(await tempDir(), "busy.sock"));
    let connects = 0;
    try {
      // The first connects meet a real full backlog; then there is room (the generation's socket).
      const result = await sendSocketRequest({
        socketPath: server.socketPath,
        token,
        request: { type: "tool_gate" },
        timeoutMs: 5_000,
        connect: (path) => {
          connects += 1;
          return netConnect(connects <= 3 ? busy.path : path);
        },
      });
      expect(result).toEqual({ kind: "answered", answer: { decision: "allow" } });
      expect(connects).toBe(4);
    } finally {
      busy.end();
    }
  });

  test("a wrong token, or a server without a request handler, closes the connection unanswered", async () => {
    let calls = 0;
    const { server } = await requestServer(() => {
      calls += 1;
    });
    const wrong = await sendSocketRequest({
      socketPath: server.socketPath,
      token: mintToken(randomBytes),
      request: {},
      timeoutMs: 5_000,
    });
    expect(wrong).toEqual({ kind: "closed" });
    const { server: mcpOnly, tokens } = await startServer({
      dir: join(await tempDir(), "g2"),
      generation: 2,
    });
    const refused = await sendSocketRequest({
      socketPath: mcpOnly.socketPath,
      token: tokens.issue({ turnId: "t" }),
      request: {},
      timeoutMs: 5_000,
    });
    expect(refused).toEqual({ kind: "closed" });
    expect(calls).toBe(0);
  });

  test("a handler that throws is reported as failed; one that never answers times the client out", async () => {
    const { server, token } = await requestServer((_context, request) => {
      if ((request as { slow?: boolean }).slow) return new Promise(() => {});
      throw new Error("journal is closed");
    });
    expect(
      await sendSocketRequest({ socketPath: server.socketPath, token, request: {}, timeoutMs: 5_000 }),
    ).toEqual({ kind: "failed", message: "journal is closed" });
    const started = Date.now();
    expect(
      await sendSocketRequest({
        socketPath: server.socketPath,
        token,
        request: { slow: true },
        timeoutMs: 300,
      }),
    ).toEqual({ kind: "timed-out" });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test("no socket at the path is unreachable; a server closing mid-request is closed", async () => {
    const missing = await sendSocketRequest({
      socketPath: join(await tempDir(), "nothing.sock"),
      token: "t",
      request: {},
      timeoutMs: 5_000,
    });
    expect(missing).toMatchObject({ kind: "unreachable", message: "ENOENT" });
    const { server, token } = await requestServer(() => new Promise(() => {}));
    const pending = sendSocketRequest({
      socketPath: server.socketPath,
      token,
      request: {},
      timeoutMs: 10_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await server.close();
    expect(await pending).toEqual({ kind: "closed" });
  });

  test("an over-long request line, and a channel name it does not know, are refused", async () => {
    let calls = 0;
    const { server, token } = await requestServer(() => {
      calls += 1;
    });
    const hello = `${JSON.stringify({ token, channel: "request" })}\n`;
    const long = await sendAndAwaitClose(server.socketPath, `${hello}${"x".repeat(maxRequestBytes + 10)}`);
    expect(long.received).toBe("");
    const unknown = await sendAndAwaitClose(
      server.socketPath,
      `${JSON.stringify({ token, channel: "admin" })}\n{}\n`,
    );
    expect(unknown.received).toBe("");
    expect(calls).toBe(0);
  });

  test("authorize is told the channel: a request-only token is answered there and opens no MCP", async () => {
    const gateTokens = new TurnTokenRegistry<TurnContext>(randomBytes);
    const { server, tokens } = await startServer({
      dir: join(await tempDir(), "g1"),
      generation: 1,
      handleRequest: () => ({ decision: "allow" }),
      authorize: (token, channel) => (channel === "request" ? gateTokens : tokens).authorize(token),
    });
    const gateToken = gateTokens.issue({ turnId: "turn-a" });
    const answered = await sendSocketRequest({
      socketPath: server.socketPath,
      token: gateToken,
      request: {},
      timeoutMs: 5_000,
    });
    expect(answered).toEqual({ kind: "answered", answer: { decision: "allow" } });
    const mcp = await sendAndAwaitClose(
      server.socketPath,
      `${JSON.stringify({ token: gateToken })}\n${initializeRequestLine}`,
    );
    expect(mcp.received).toBe("");
    // The MCP token, conversely, is no good on the request channel.
    const mcpToken = tokens.issue({ turnId: "turn-a" });
    expect(
      await sendSocketRequest({
        socketPath: server.socketPath,
        token: mcpToken,
        request: {},
        timeoutMs: 5_000,
      }),
    ).toEqual({ kind: "closed" });
  });

  test("the same token still opens MCP on the same socket", async () => {
    const { server, token } = await requestServer(() => ({}));
    const socket = await openSocket(server.socketPath);
    let received = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => {
      received += chunk;
    });
    socket.write(`${JSON.stringify({ token })}\n${initializeRequestLine}`);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no MCP answer: ${received}`)), 5_000);
      socket.on("data", () => {
        if (received.includes('"serverInfo"')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    socket.destroy();
  });
});

describe("runToolGateHook: the call starts only once the daemon said so", () => {
  test("allow: exit 0, nothing written; the daemon saw the call's id, name and input preview", async () => {
    const seen: unknown[] = [];
    const { server, token } = await requestServer((_context, request) => {
      seen.push(request);
      return { decision: "allow" };
    });
    const stderr = stderrSink();
    const code = await runToolGateHook({
      stdin: Readable.from([JSON.stringify(hookInput)]),
      env: { FLOOT_MCP_SOCKET: server.socketPath, FLOOT_MCP_TOKEN: token },
      stderr,
    });
    expect(code).toBe(ToolGateHookExit.allow);
    expect(stderr.text()).toBe("");
    expect(seen).toEqual([
      {
        type: "tool_gate",
        toolCallId: "toolu_1",
        toolName: "Bash",
        inputPreview: JSON.stringify(hookInput.tool_input),
      },
    ]);
  });

  test("a large input is cut to the preview length", async () => {
    const seen: { inputPreview: string }[] = [];
    const { server, token } = await requestServer((_context, request) => {
      seen.push(request as { inputPreview: string });
      return { decision: "allow" };
    });
    const input = { ...hookInput, tool_input: { content: "y".repeat(100_000) } };
    expect(
      await runToolGateHook({
        stdin: Readable.from([JSON.stringify(input)]),
        env: { FLOOT_MCP_SOCKET: server.socketPath, FLOOT_MCP_TOKEN: token },
        stderr: stderrSink(),
      }),
    ).toBe(ToolGateHookExit.allow);
    expect(seen[0]?.inputPreview).toHaveLength(2_000);
  });

  test.each([
    [
      "the daemon denies",
      { decision: "deny", reason: "turn t is cancelled; no tool call of it may start" },
      /cancelled/,
    ],
    ["the daemon answers nonsense", { decision: "maybe" }, /could not read/],
  ])("%s: exit 2 with a reason for the model", async (_name, answer, reason) => {
    const { server, token } = await requestServer(() => answer);
    const stderr = stderrSink();
    const code = await runToolGateHook({
      stdin: Readable.from([JSON.stringify(hookInput)]),
      env: { FLOOT_MCP_SOCKET: server.socketPath, FLOOT_MCP_TOKEN: token },
      stderr,
    });
    expect(code).toBe(ToolGateHookExit.block);
    expect(stderr.text()).toMatch(/^floot: this tool call was NOT run: /);
    expect(stderr.text()).toMatch(reason);
    expect(stderr.text()).not.toContain(token);
  });

  test("fails closed: no daemon, a slow daemon, bad stdin, no configuration", async () => {
    const env = { FLOOT_MCP_SOCKET: join(await tempDir(), "gone.sock"), FLOOT_MCP_TOKEN: "a".repeat(64) };
    const run = async (
      stdin: string,
      overrides: Record<string, string | undefined> = {},
      deadlineMs = 5_000,
    ) => {
      const stderr = stderrSink();
      const code = await runToolGateHook({
        stdin: Readable.from([stdin]),
        env: { ...env, ...overrides },
        stderr,
        deadlineMs,
      });
      return { code, stderr: stderr.text() };
    };
    expect(await run(JSON.stringify(hookInput))).toEqual({
      code: 2,
      stderr: expect.stringContaining("cannot be reached"),
    });
    const { server, token } = await requestServer(() => new Promise(() => {}));
    expect(
      await run(
        JSON.stringify(hookInput),
        { FLOOT_MCP_SOCKET: server.socketPath, FLOOT_MCP_TOKEN: token },
        300,
      ),
    ).toEqual({ code: 2, stderr: expect.stringContaining("did not record it within") });
    expect(await run("not json")).toEqual({ code: 2, stderr: expect.stringContaining("stdin is not JSON") });
    expect(await run(JSON.stringify({ ...hookInput, tool_use_id: undefined }))).toEqual({
      code: 2,
      stderr: expect.stringContaining("tool_use_id"),
    });
    expect(await run(JSON.stringify(hookInput), { FLOOT_MCP_TOKEN: undefined })).toEqual({
      code: 2,
      stderr: expect.stringContaining("FLOOT_MCP_TOKEN"),
    });
  });

  test("as the PostToolUse hook: reports the finished call by its id, exit 0 and silent even when the daemon refuses or is gone", async () => {
    const finished = { ...hookInput, hook_event_name: "PostToolUse", tool_response: { stdout: "ran" } };
    const seen: unknown[] = [];
    const { server, token } = await requestServer((_context, request) => {
      seen.push(request);
      return seen.length === 1 ? { decision: "allow" } : { decision: "deny", reason: "no such call" };
    });
    const report = async (env: Record<string, string>) => {
      const stderr = stderrSink();
      const code = await runToolGateHook({
        stdin: Readable.from([JSON.stringify(finished)]),
        env,
        stderr,
        deadlineMs: 1_000,
      });
      return { code, stderr: stderr.text() };
    };
    const live = { FLOOT_MCP_SOCKET: server.socketPath, FLOOT_MCP_TOKEN: token };
    expect(await report(live)).toEqual({ code: ToolGateHookExit.allow, stderr: "" });
    expect(seen).toEqual([{ type: "tool_completed", toolCallId: "toolu_1" }]);
    expect(await report(live)).toEqual({ code: ToolGateHookExit.allow, stderr: "" });
    const gone = { FLOOT_MCP_SOCKET: join(await tempDir(), "gone.sock"), FLOOT_MCP_TOKEN: "a".repeat(64) };
    expect(await report(gone)).toEqual({ code: ToolGateHookExit.allow, stderr: "" });
    // Neither event name: refused like any unreadable input.
    const stderr = stderrSink();
    expect(
      await runToolGateHook({
        stdin: Readable.from([JSON.stringify({ ...hookInput, hook_event_name: "Stop" })]),
        env: live,
        stderr,
      }),
    ).toBe(ToolGateHookExit.block);
    expect(stderr.text()).toContain("hook_event_name");
  });

  test("the daemon restarting: the hook waits for the rebind file's new socket and token, within its deadline", async () => {
    const dir = await tempDir();
    const rebindFile = join(dir, "turn.gate");
    const gone = { FLOOT_MCP_SOCKET: join(dir, "gone.sock"), FLOOT_MCP_TOKEN: "a".repeat(64) };
    const seen: unknown[] = [];
    const { server, token } = await requestServer((_context, request) => {
      seen.push(request);
      return { decision: "allow" };
    });
    // The file of the daemon that adopts the turn comes a moment later.
    setTimeout(() => writeFileSync(rebindFile, JSON.stringify({ socket: server.socketPath, token })), 300);
    const stderr = stderrSink();
    const code = await runToolGateHook({
      stdin: Readable.from([JSON.stringify(hookInput)]),
      env: { ...gone, FLOOT_GATE_REBIND_FILE: rebindFile },
      stderr,
      deadlineMs: 10_000,
      rebindPollMs: 20,
    });
    expect(code).toBe(ToolGateHookExit.allow);
    expect(seen).toHaveLength(1);
    expect(stderr.text()).toBe("");

    // A rebind file holding the token that was refused, or none, blocks once the deadline passes.
    writeFileSync(rebindFile, JSON.stringify({ socket: join(dir, "gone.sock"), token: "a".repeat(64) }));
    const blocked = stderrSink();
    expect(
      await runToolGateHook({
        stdin: Readable.from([JSON.stringify(hookInput)]),
        env: { ...gone, FLOOT_GATE_REBIND_FILE: rebindFile },
        stderr: blocked,
        deadlineMs: 400,
        rebindPollMs: 20,
      }),
    ).toBe(ToolGateHookExit.block);
    expect(blocked.text()).toContain("cannot be reached");
    expect(seen).toHaveLength(1);
  });

  test("as a process (dist/gate-hook.js): exit 0 when admitted, 2 with the reason when the daemon is gone", async () => {
    const { server, token } = await requestServer(() => ({ decision: "allow" }));
    const runHook = async (socketPath: string) => {
      const hook = processes.spawn(process.execPath, [defaultGateHookScriptPath(), "5000"], {
        env: { FLOOT_MCP_SOCKET: socketPath, FLOOT_MCP_TOKEN: token },
        stdio: ["pipe", "pipe", "pipe"],
      });
      hook.child.stdin?.end(JSON.stringify(hookInput));
      const { code } = await hook.exited;
      return { code, stderr: hook.stderr(), stdout: hook.stdout() };
    };
    expect(await runHook(server.socketPath)).toEqual({ code: 0, stderr: "", stdout: "" });
    await server.close();
    const gone = await runHook(server.socketPath);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain("cannot be reached");
    expect(gone.stdout).toBe("");
  });

  test("another local user cannot reach the gate: its hook blocks, nothing is admitted", async () => {
    const calls: unknown[] = [];
    const { server, token } = await requestServer((context, request) => {
      calls.push([context, request]);
      return { decision: "allow" };
    });
    // Even holding the right token (a leak), uid 65534 cannot open the 0700 generation dir's socket.
    const hook = processes.spawn(
      "setpriv",
      ["--reuid", "65534", "--regid", "65534", "--clear-groups", process.execPath, "-e", gateHookScript],
      {
        env: { FLOOT_MCP_SOCKET: server.socketPath, FLOOT_MCP_TOKEN: token, PATH: process.env.PATH ?? "" },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    hook.child.stdin?.end(JSON.stringify(hookInput));
    const { code } = await hook.exited;
    expect(code).toBe(2);
    expect(hook.stderr()).toContain("cannot be reached (EACCES)");
    expect(calls).toEqual([]);
  });
});

// The gate hook as another user runs it: its script is read here (the nobody user may not read this
// checkout's files) and handed to node on its command line.
const gateHookScript = `
const { connect } = require("node:net");
let input = "";
process.stdin.on("data", (chunk) => (input += chunk)).on("end", () => {
  const socket = connect(process.env.FLOOT_MCP_SOCKET);
  socket.on("error", (error) => {
    process.stderr.write("floot: this tool call was NOT run: the Floot daemon cannot be reached (" + error.code + ")\\n");
    process.exit(2);
  });
  socket.on("connect", () => {
    socket.write(JSON.stringify({ token: process.env.FLOOT_MCP_TOKEN, channel: "request" }) + "\\n");
    socket.write(JSON.stringify({ type: "tool_gate", toolCallId: "t", toolName: "Bash", inputPreview: input.slice(0, 100) }) + "\\n");
  });
  socket.on("data", () => process.exit(0));
  socket.on("close", () => process.exit(3));
});
`;
