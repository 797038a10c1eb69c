import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { toolResult, toolTurnScript } from "@bridgeworks/model-double";
import {
  type DoubledEnvironments,
  doubledEnvironments,
  type IsolatedEnvironment,
  parseJsonLines,
  waitUntil,
  withTimeout,
} from "@bridgeworks/test-harness";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import {
  bridgeGenerationDir,
  claudeMcpConfig,
  codexMcpOverrides,
  defaultShimScriptPath,
  isPidAlive,
  mcpSocketName,
  mintToken,
  mintTurnMount,
  removeStaleGenerations,
  ShimExitCode,
  writeMcpConfigFile,
} from "../src/index.js";
import { exited, useChildren, useTempDirs } from "./helpers.js";
import { type EchoBridge, useMcpServers } from "./mcp-helpers.js";

const repoRoot = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const tempDir = useTempDirs();
const startServer = useMcpServers();
const track = useChildren();

/** Builds dist/shim.js the way CI does; pnpm comes from PATH, else the repo's pinned tools dir. */
beforeAll(async () => {
  const pinned = join(repoRoot, ".tools/node_modules/.bin/pnpm");
  const pnpm = existsSync(pinned) ? pinned : "pnpm";
  await promisify(execFile)(pnpm, ["turbo", "run", "build", "--filter", "@bridgeworks/control-channel"], {
    cwd: repoRoot,
    timeout: 240_000,
  });
  expect(existsSync(defaultShimScriptPath())).toBe(true);
}, 300_000);

const livePids = new Set<number>();
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
  for (const pid of livePids) {
    if (isPidAlive(pid)) process.kill(pid, "SIGKILL");
  }
  livePids.clear();
});

async function bridgeAt(generation: number): Promise<EchoBridge> {
  return startServer({ dir: bridgeGenerationDir(join(await tempDir(), "bridges"), generation), generation });
}

describe("node dist/shim.js with a real MCP SDK client", { timeout: 30_000 }, () => {
  test("lists and calls the socket server's tools; closing the server mid-call fails the call and ends the shim", async () => {
    const { server, tokens, probe } = await bridgeAt(1);
    const mount = mintTurnMount({
      socketPath: server.socketPath,
      token: tokens.issue({ turnId: "turn-sdk" }),
    });
    const transport = new StdioClientTransport({ ...mount, stderr: "pipe" });
    let shimStderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      shimStderr += chunk.toString("utf8");
    });
    const client = new Client({ name: "sdk-through-shim", version: "0.0.0" });
    clients.push(client);
    await client.connect(transport);
    const shimPid = transport.pid;
    expect(shimPid).toBeTypeOf("number");
    livePids.add(shimPid!);

    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toEqual(["echo", "slow"]);
    const echoed = await client.callTool({ name: "echo", arguments: { text: "through the shim" } });
    expect(echoed.content).toEqual([{ type: "text", text: "echo(turn-sdk): through the shim" }]);

    const slow = client.callTool({ name: "slow", arguments: {} }).then(
      () => "resolved",
      (error: unknown) => `rejected: ${(error as Error).message}`,
    );
    await withTimeout(probe.slowStarted.promise, 5_000, () => "slow call reached the server");
    const closedAt = Date.now();
    await server.close();

    expect(await withTimeout(slow, 5_000, () => "in-flight call settled")).toMatch(
      /^rejected: .*Connection closed/,
    );
    const settledAfterMs = Date.now() - closedAt;
    await waitUntil(() => !isPidAlive(shimPid!), 5_000, "shim process exited");
    expect(settledAfterMs).toBeLessThan(5_000);
    expect(shimStderr).toContain("bridge socket closed");
    expect(shimStderr).not.toContain(mount.env.FLOOT_MCP_TOKEN);
  });

  test("a mount of a removed generation: the shim exits non-zero within 2 s, stdout empty", async () => {
    const socketPath = join(await tempDir(), "bridges", "g1", mcpSocketName);
    const mount = mintTurnMount({ socketPath, token: mintToken((size) => Buffer.alloc(size, 7)) });
    const started = Date.now();
    const shim = track(spawn(mount.command, mount.args, { env: mount.env, stdio: ["pipe", "pipe", "pipe"] }));
    let stdout = "";
    shim.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    await withTimeout(exited(shim), 2_000, () => "stale shim exit");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(shim.exitCode).toBe(ShimExitCode.bridgeUnavailable);
    expect(stdout).toBe("");
  });

  test("the CLI's own NODE_OPTIONS (merged into the server env, as claude does) cannot reach the shim", async () => {
    const { server, tokens } = await bridgeAt(2);
    const mount = mintTurnMount({
      socketPath: server.socketPath,
      token: tokens.issue({ turnId: "turn-env" }),
    });
    const transport = new StdioClientTransport({
      command: mount.command,
      args: mount.args,
      // What Claude Code does: its whole environment, then the mount's env on top.
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        NODE_OPTIONS: "--require /nonexistent/hook.cjs",
        ...mount.env,
      },
      stderr: "pipe",
    });
    const client = new Client({ name: "merged-env", version: "0.0.0" });
    clients.push(client);
    await client.connect(transport);
    livePids.add(transport.pid!);
    const echoed = await client.callTool({ name: "echo", arguments: { text: "clean" } });
    expect(echoed.content).toEqual([{ type: "text", text: "echo(turn-env): clean" }]);
  });
});

const claudeTurnTimeoutMs = 90_000;

/** A model double and an isolated environment on it per test; both are disposed after each test. */
function useDoubledEnvironments(): DoubledEnvironments["start"] {
  const doubled = doubledEnvironments();
  afterEach(() => doubled.dispose());
  return doubled.start;
}

describe("real claude -p mounting the bridge through the shim", { timeout: 120_000 }, () => {
  const startDoubled = useDoubledEnvironments();

  function runClaude(env: IsolatedEnvironment, mcpConfig: string, allowedTools: string[]) {
    return env.spawn(
      "claude",
      [
        "-p",
        "use the floot tool",
        "--output-format",
        "stream-json",
        "--verbose",
        "--mcp-config",
        mcpConfig,
        "--strict-mcp-config",
        "--allowedTools",
        allowedTools.join(","),
      ],
      { env: { ENABLE_TOOL_SEARCH: "false" } },
    );
  }

  test("calls the echo tool and sends its result back to the model", async () => {
    const { server, tokens, probe } = await bridgeAt(3);
    const token = tokens.issue({ turnId: "turn-claude" });
    const { double, environment } = await startDoubled(
      toolTurnScript(
        [{ id: "toolu_floot_echo", nameFrom: { endsWith: "__echo" }, input: { text: "ECHO_MARKER" } }],
        "echoed",
      ),
      // Claude Code hands its environment to stdio servers: the mount must hold up against this.
      { env: { NODE_OPTIONS: "--require /nonexistent/hook.cjs" } },
    );
    const config = claudeMcpConfig({ floot: mintTurnMount({ socketPath: server.socketPath, token }) });
    const claude = runClaude(environment, JSON.stringify(config), ["mcp__floot__echo"]);
    // Fail fast when the mount did not connect (the double cannot resolve the tool, claude would retry).
    await claude.waitForOutput((out) => out.includes('"subtype":"init"'), claudeTurnTimeoutMs);
    const init = parseJsonLines(claude.stdout()).find(
      (line) => line.type === "system" && line.subtype === "init",
    );
    expect(init?.mcp_servers).toEqual([expect.objectContaining({ name: "floot", status: "connected" })]);
    const exit = await withTimeout(
      claude.exited,
      claudeTurnTimeoutMs,
      () => `claude turn\n${claude.stderr()}`,
    );

    expect(exit.code, claude.stderr()).toBe(0);
    const lines = parseJsonLines(claude.stdout());
    const followUp = double.requests.find(
      (request) => toolResult("anthropic", request.body, "toolu_floot_echo") !== undefined,
    );
    expect(toolResult("anthropic", followUp?.body, "toolu_floot_echo")).toEqual({
      text: "echo(turn-claude): ECHO_MARKER",
      isError: false,
    });
    expect(probe.calls).toEqual([
      expect.objectContaining({
        turnId: "turn-claude",
        name: "echo",
        arguments: { text: "ECHO_MARKER" },
        meta: expect.objectContaining({ "claudecode/toolUseId": "toolu_floot_echo" }),
      }),
    ]);
    expect(lines.find((line) => line.type === "result")).toMatchObject({ is_error: false, result: "echoed" });
  });

  test("a mount of a removed generation: the tool is unavailable and the turn still ends, well within 30 s", async () => {
    const bridgesDir = join(await tempDir(), "bridges");
    const before = await startServer({ dir: bridgeGenerationDir(bridgesDir, 1), generation: 1 });
    const staleSocket = before.server.socketPath;
    const staleToken = before.tokens.issue({ turnId: "before-restart" });
    // Restart: generation 1 goes away, generation 2 is served and the older dirs are removed.
    await before.server.close();
    await startServer({ dir: bridgeGenerationDir(bridgesDir, 2), generation: 2 });
    expect(await removeStaleGenerations(bridgesDir, 2)).toEqual([1]);
    const { double, environment } = await startDoubled(
      toolTurnScript([{ id: "toolu_stale", name: "mcp__floot__echo", input: { text: "x" } }], "no bridge"),
    );
    // The config as a 0600 file (the production form: no token in claude's argv).
    const configPath = join(environment.root, "turn.mcp.json");
    await writeMcpConfigFile(
      configPath,
      claudeMcpConfig({ floot: mintTurnMount({ socketPath: staleSocket, token: staleToken }) }),
    );
    const started = Date.now();
    const claude = runClaude(environment, configPath, ["mcp__floot__echo"]);
    const exit = await withTimeout(
      claude.exited,
      30_000,
      () => `claude with a stale mount\n${claude.stderr()}`,
    );
    const elapsedMs = Date.now() - started;

    const lines = parseJsonLines(claude.stdout());
    const init = lines.find((line) => line.type === "system" && line.subtype === "init");
    expect(init?.mcp_servers).toEqual([expect.objectContaining({ name: "floot", status: "failed" })]);
    const followUp = double.requests.find(
      (request) => toolResult("anthropic", request.body, "toolu_stale") !== undefined,
    );
    expect(toolResult("anthropic", followUp?.body, "toolu_stale")).toEqual({
      text: expect.stringContaining("No such tool available"),
      isError: true,
    });
    expect(exit.code).not.toBeNull();
    expect(elapsedMs).toBeLessThan(30_000);
    console.info(`[measured] claude with a stale mount: exit ${exit.code} after ${elapsedMs} ms`);
  });

  test("the bridge closing during a tools/call: claude gets a tool error within 5 s and finishes the turn", async () => {
    const { server, tokens, probe } = await bridgeAt(4);
    const token = tokens.issue({ turnId: "turn-dies" });
    const { double, environment } = await startDoubled(
      toolTurnScript([{ id: "toolu_slow", nameFrom: { endsWith: "__slow" }, input: {} }], "bridge went away"),
    );
    const config = claudeMcpConfig({ floot: mintTurnMount({ socketPath: server.socketPath, token }) });
    const claude = runClaude(environment, JSON.stringify(config), ["mcp__floot__slow"]);

    await withTimeout(
      probe.slowStarted.promise,
      claudeTurnTimeoutMs,
      () => `slow call started\n${claude.stderr()}`,
    );
    const closedAt = Date.now();
    await server.close();
    const followUp = await double.waitForRequest(
      (request) => toolResult("anthropic", request.body, "toolu_slow") !== undefined,
      {
        timeoutMs: 5_000,
      },
    );
    const toolErrorAfterMs = followUp.receivedAt - closedAt;
    const exit = await withTimeout(
      claude.exited,
      30_000,
      () => `claude after bridge death\n${claude.stderr()}`,
    );

    expect(toolResult("anthropic", followUp?.body, "toolu_slow")).toEqual({
      text: expect.stringContaining("Connection closed"),
      isError: true,
    });
    expect(toolErrorAfterMs).toBeLessThan(5_000);
    expect(exit.code, claude.stderr()).toBe(0);
    expect(parseJsonLines(claude.stdout()).find((line) => line.type === "result")).toMatchObject({
      result: "bridge went away",
    });
    console.info(
      `[measured] bridge death mid-call: tool_result error reached the model ${toolErrorAfterMs} ms later`,
    );
  });
});

describe("real codex exec mounting the bridge through the shim", { timeout: 120_000 }, () => {
  const startDoubled = useDoubledEnvironments();

  test("calls the echo tool with the token in codex's environment, not its argv", async () => {
    const { server, tokens, probe } = await bridgeAt(5);
    const token = tokens.issue({ turnId: "turn-codex" });
    const { environment } = await startDoubled(
      toolTurnScript(
        [{ id: "call_floot_echo", nameFrom: { endsWith: "echo" }, input: { text: "CX" } }],
        "codex echoed",
      ),
      { model: "gpt-5.1-codex" },
    );
    const overrides = codexMcpOverrides("floot", mintTurnMount({ socketPath: server.socketPath, token }));
    const args = [
      "exec",
      "--json",
      "--skip-git-repo-check",
      ...overrides.args,
      "-c",
      'mcp_servers.floot.default_tools_approval_mode="approve"',
      "use the floot tool",
    ];
    expect(args.join(" ")).not.toContain(token);
    const codex = environment.spawn("codex", args, { env: overrides.env });
    const exit = await withTimeout(codex.exited, claudeTurnTimeoutMs, () => `codex turn\n${codex.stderr()}`);

    expect(exit.code, codex.stderr()).toBe(0);
    const completed = parseJsonLines(codex.stdout()).find(
      (line) => line.type === "item.completed" && (line.item as { type?: string }).type === "mcp_tool_call",
    );
    expect(completed?.item).toMatchObject({
      server: "floot",
      tool: "echo",
      status: "completed",
      result: { content: [{ type: "text", text: "echo(turn-codex): CX" }] },
    });
    expect(probe.calls).toEqual([
      expect.objectContaining({
        turnId: "turn-codex",
        meta: expect.objectContaining({ callId: "call_floot_echo" }),
      }),
    ]);
  });
});
