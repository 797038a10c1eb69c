import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ProcessTracker, type TrackedProcess } from "@bridgeworks/test-harness";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach } from "vitest";

export const bundlePath = fileURLToPath(new URL("../bundle/bee.mjs", import.meta.url));

/** A temp dir holding a board, a run dir and a home, removed by `dispose`. */
export interface Sandbox {
  root: string;
  board: string;
  runDir: string;
  home: string;
  env: Record<string, string>;
  dispose(): void;
}

export function createSandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), "bee-bridge-test-"));
  const home = join(root, "home");
  mkdirSync(home, { mode: 0o700 });
  const board = join(root, "state", "board.db");
  const runDir = join(root, "run");
  return {
    root,
    board,
    runDir,
    home,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      LANG: "C.UTF-8",
      BEE_BOARD: board,
      BEE_RUN_DIR: runDir,
    },
    dispose: () => rmSync(root, { recursive: true, force: true }),
  };
}

export interface BridgeTestScope {
  readonly tracker: ProcessTracker;
  readonly sandbox: Sandbox;
}

/** A fresh process tracker and sandbox for each test of the calling file, both ended after it. */
export function useBridgeTestScope(): BridgeTestScope {
  let current: BridgeTestScope | undefined;
  beforeEach(() => {
    current = { tracker: new ProcessTracker(), sandbox: createSandbox() };
  });
  afterEach(async () => {
    await current?.tracker.endAll();
    current?.sandbox.dispose();
    current = undefined;
  });
  const active = () => {
    if (!current) throw new Error("the bridge test scope is used outside a test");
    return current;
  };
  return {
    get tracker() {
      return active().tracker;
    },
    get sandbox() {
      return active().sandbox;
    },
  };
}

/** An MCP client transport over a child's stdio that keeps every byte the child wrote to stdout. */
export class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #child: TrackedProcess["child"];
  readonly #buffer = new ReadBuffer();
  readonly stdoutChunks: string[] = [];

  constructor(child: TrackedProcess["child"]) {
    this.#child = child;
  }

  async start(): Promise<void> {
    this.#child.stdout?.on("data", (chunk: string | Buffer) => {
      const text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
      this.stdoutChunks.push(text);
      this.#buffer.append(Buffer.from(text, "utf8"));
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.#buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    this.#child.on("exit", () => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.#child.stdin?.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.#child.stdin?.end();
  }

  rawStdout(): string {
    return this.stdoutChunks.join("");
  }
}

export interface RunningBridge {
  process: TrackedProcess;
  client: Client;
  transport: ChildStdioTransport;
}

export interface StartBridgeOptions {
  tracker: ProcessTracker;
  env: Record<string, string>;
  cwd?: string;
  /** Runs before the client connects, e.g. to install notification handlers. */
  configureClient?: (client: Client) => void;
}

/** Spawns the built `bee bridge` and connects an MCP SDK client to it over stdio. */
export async function startBridge({
  tracker,
  env,
  cwd,
  configureClient,
}: StartBridgeOptions): Promise<RunningBridge> {
  const child = tracker.spawn(process.execPath, [bundlePath, "bridge"], {
    cwd: cwd ?? env.HOME,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const transport = new ChildStdioTransport(child.child);
  const client = new Client({ name: "bee-test", version: "0.0.0" });
  configureClient?.(client);
  await client.connect(transport);
  return { process: child, client, transport };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built `bee` CLI to completion. */
export function runBee(
  args: readonly string[],
  env: Record<string, string>,
  input?: string,
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [bundlePath, ...args],
      { env, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(input ?? "");
  });
}

/** The SessionStart hook input Claude Code sends for `source`. */
export function sessionStartInput(source: string): string {
  return JSON.stringify({
    session_id: "s-1",
    transcript_path: "/tmp/t.jsonl",
    cwd: "/tmp",
    hook_event_name: "SessionStart",
    source,
  });
}

/** `bee hook session-start` for the claude process `claudePid`, as Claude Code runs it on `/clear`. */
export function runClearHook(sandbox: Sandbox, claudePid: number): Promise<CliResult> {
  return runBee(
    ["hook", "session-start"],
    { ...sandbox.env, CLAUDE_PID: String(claudePid) },
    sessionStartInput("clear"),
  );
}

/** Polls `check` until it holds; the bound only turns a hang into a readable failure. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function textOf(result: unknown): string {
  const content = ((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>;
  return content.map((part) => part.text ?? "").join("");
}

/** A stand-in for the claude process: a long sleep whose pid the bridge reads from CLAUDE_PID. */
export function startFakeClaude(tracker: ProcessTracker): TrackedProcess {
  return tracker.spawn("sleep", ["600"], { stdio: "ignore" });
}

/**
 * A bridge (agent `alpha`) under a fake claude, once it has written its run file:
 * `runFilePath` is `<runDir>/<claudePid>.json`.
 */
export async function startBridgeWithRunFile(tracker: ProcessTracker, sandbox: Sandbox) {
  const claude = startFakeClaude(tracker);
  const running = await startBridge({
    tracker,
    env: { ...sandbox.env, BEE_AGENT: "alpha", CLAUDE_PID: String(claude.pid) },
  });
  const runFilePath = join(sandbox.runDir, `${claude.pid}.json`);
  await eventually(() => existsSync(runFilePath));
  return { claude, running, runFilePath };
}

/** A bridge named `agent` in the scope's sandbox (its board, run dir and home). */
export function startAgentBridge(scope: BridgeTestScope, agent: string): Promise<RunningBridge> {
  return startBridge({ tracker: scope.tracker, env: { ...scope.sandbox.env, BEE_AGENT: agent } });
}

/** A tool call's `structuredContent`, after checking the call succeeded and its text says the same. */
export function structured<T>(value: unknown): T {
  const result = value as { structuredContent?: unknown; isError?: unknown };
  if (result.isError) throw new Error(`the tool call failed: ${textOf(result)}`);
  if (textOf(result) !== JSON.stringify(result.structuredContent)) {
    throw new Error(`the text is not the structured content: ${textOf(result)}`);
  }
  return result.structuredContent as T;
}
