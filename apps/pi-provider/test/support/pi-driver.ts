import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ModelDouble } from "@bridgeworks/model-double";
import { ClaudeBridgeDiagnosticRecord } from "@bridgeworks/protocol";
import { type IsolatedEnvironment, resolveRealClient, type TrackedProcess } from "@bridgeworks/test-harness";

export const appDir = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

export interface PiLine {
  readonly name: string;
  readonly node: string;
  readonly cli: string;
}

/** Pi 0.73 (`@mariozechner`, the machine's Node 20) and Pi's current line (`@earendil-works`, Node 24). */
export function piLines(node24: string): PiLine[] {
  const current = findManifest("@earendil-works/pi-coding-agent");
  const manifest = JSON.parse(readFileSync(current, "utf8")) as { version: string; bin: { pi: string } };
  const legacy = resolveRealClient("pi");
  return [
    { name: `pi ${legacy.version}`, node: process.execPath, cli: legacy.executable },
    { name: `pi ${manifest.version}`, node: node24, cli: join(dirname(current), manifest.bin.pi) },
  ];
}

function findManifest(packageName: string): string {
  const require = createRequire(join(appDir, "package.json"));
  for (const dir of require.resolve.paths(packageName) ?? []) {
    const candidate = join(dir, packageName, "package.json");
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`${packageName} is not installed; run the workspace install`);
}

export type PiEvent = Record<string, unknown> & { type: string };

export interface PiOptions {
  readonly mode: "rpc" | "json";
  readonly prompt?: string;
  readonly env?: Record<string, string>;
  /** Pi's provider to start with (default `claude-code`); `double` is the isolated env's models.json one. */
  readonly provider?: string;
  readonly model?: string;
  /** Keep Pi's session on disk (default: `--no-session`), e.g. to start again with `--continue`. */
  readonly persistSession?: boolean;
  readonly extraArgs?: readonly string[];
}

/** A real `pi` with this package loaded through `-e <package dir>`, speaking JSONL on stdout. */
export class PiProcess {
  readonly process: TrackedProcess;
  private consumed = 0;
  private calls = 0;
  private readonly parsed: PiEvent[] = [];

  constructor(
    readonly environment: IsolatedEnvironment,
    readonly line: PiLine,
    private readonly options: PiOptions,
  ) {
    const args = [
      line.cli,
      "--mode",
      options.mode,
      ...(options.persistSession ? [] : ["--no-session"]),
      "-ne",
      "-e",
      appDir,
      "--provider",
      options.provider ?? "claude-code",
      "--model",
      options.model ?? "sonnet",
      ...(options.extraArgs ?? []),
      ...(options.prompt !== undefined ? [options.prompt] : []),
    ];
    this.process = environment.spawn(line.node, args, {
      env: { PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", ...options.env },
      keepStdinOpen: options.mode === "rpc",
    });
  }

  get pid(): number {
    return this.process.pid;
  }

  get mode(): PiOptions["mode"] {
    return this.options.mode;
  }

  /** Every JSON line so far (split on `\n` only, as Pi's RPC protocol requires). */
  events(): PiEvent[] {
    const text = this.process.stdout();
    const end = text.lastIndexOf("\n");
    if (end >= this.consumed) {
      for (const line of text.slice(this.consumed, end).split("\n")) {
        if (line.trim().startsWith("{")) this.parsed.push(JSON.parse(line) as PiEvent);
      }
      this.consumed = end + 1;
    }
    return this.parsed;
  }

  send(command: Record<string, unknown>): void {
    this.process.child.stdin?.write(`${JSON.stringify(command)}\n`);
  }

  prompt(message: string, images?: { type: "image"; data: string; mimeType: string }[]): void {
    this.send({ type: "prompt", message, ...(images ? { images } : {}) });
  }

  /** Sends an RPC command with an id and returns Pi's `response` to it (`success` says how it went). */
  async call(command: Record<string, unknown> & { type: string }, timeoutMs = 30_000): Promise<PiEvent> {
    const id = `call-${++this.calls}`;
    const from = this.events().length;
    this.send({ ...command, id });
    return this.waitFor((event) => event.type === "response" && event.id === id, timeoutMs, from);
  }

  async waitFor(predicate: (event: PiEvent) => boolean, timeoutMs: number, from = 0): Promise<PiEvent> {
    let found: PiEvent | undefined;
    await this.process
      .waitForOutput(() => {
        found = this.events().slice(from).find(predicate);
        return found !== undefined;
      }, timeoutMs)
      .catch((error: unknown) => {
        throw new Error(`${String(error)}\n--- diag log ---\n${readDiagText(this.environment)}`);
      });
    return found!;
  }

  /** Runs `/claude-code doctor` (over RPC, as a user types it) and returns its report. */
  async doctor(): Promise<string> {
    const from = this.events().length;
    this.prompt("/claude-code doctor");
    const notice = await this.waitFor(
      (event) =>
        event.type === "extension_ui_request" &&
        event.method === "notify" &&
        String(event.message).startsWith("Claude Code provider doctor"),
      30_000,
      from,
    );
    return String(notice.message);
  }

  /** The next `agent_end` after event index `from`. */
  waitForAgentEnd(from: number, timeoutMs = 90_000): Promise<PiEvent> {
    return this.waitFor((event) => event.type === "agent_end", timeoutMs, from);
  }

  /** Prompts, waits for the first streamed text delta, aborts, and waits for the run to end; returns
   * the index of the prompt's first event. */
  async abortWhileStreaming(prompt: string): Promise<number> {
    const from = this.events().length;
    this.prompt(prompt);
    await this.waitFor(
      (event) =>
        event.type === "message_update" &&
        (event.assistantMessageEvent as { type?: string } | undefined)?.type === "text_delta",
      60_000,
      from,
    );
    this.send({ type: "abort" });
    await this.waitForAgentEnd(from);
    return from;
  }
}

export function diagLogPathOf(environment: IsolatedEnvironment): string {
  return join(environment.root, "claude-bridge-diag.log");
}

export function piEnv(
  environment: IsolatedEnvironment,
  extra: Record<string, string> = {},
): Record<string, string> {
  return { CLAUDE_BRIDGE_DIAG_LOG: diagLogPathOf(environment), ...extra };
}

function readDiagText(environment: IsolatedEnvironment): string {
  const path = diagLogPathOf(environment);
  return existsSync(path) ? readFileSync(path, "utf8").slice(-6000) : "(no diag log)";
}

/** The diagnostics log, every record checked against its protocol schema (a malformed one fails the test). */
export function readDiag(
  environment: IsolatedEnvironment,
): Array<Record<string, unknown> & { type: string }> {
  const path = diagLogPathOf(environment);
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line, index) => {
      const parsed = ClaudeBridgeDiagnosticRecord.safeParse(JSON.parse(line));
      if (!parsed.success)
        throw new Error(`diag log line ${index + 1} is malformed: ${parsed.error.message}\n${line}`);
      return parsed.data as Record<string, unknown> & ClaudeBridgeDiagnosticRecord;
    });
}

export function mismatches(environment: IsolatedEnvironment): unknown[] {
  return readDiag(environment).filter((record) => record.type === "tool_result_delivery_mismatch");
}

/** Claude Code processes in `pi`'s process group (the SDK spawns it there). */
export function claudeProcessesOf(pi: PiProcess): number[] {
  const out = execFileSync("ps", ["-e", "-o", "pid=,ppid=,pgid=,comm="], { encoding: "utf8" });
  const claude = out
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, , pgid, comm]) => Number(pgid) === pi.pid && comm === "claude")
    .map(([pid, ppid]) => ({ pid: Number(pid), ppid: Number(ppid) }));
  // Claude Code's own forked child is named "claude" too until it execs or is reaped (seen under load
  // as `[claude] <defunct>`, parent the warm Claude Code); it is not a Claude Code of Pi's.
  const pids = new Set(claude.map((process) => process.pid));
  return claude.filter((process) => !pids.has(process.ppid)).map((process) => process.pid);
}

type AnthropicBlock = Record<string, unknown> & { type: string };
type AnthropicMessage = { role: string; content: string | AnthropicBlock[] };

export function messagesOf(body: unknown): AnthropicMessage[] {
  return ((body as { messages?: AnthropicMessage[] }).messages ?? []) as AnthropicMessage[];
}

export function blocksOf(body: unknown): AnthropicBlock[] {
  return messagesOf(body).flatMap((message) => (Array.isArray(message.content) ? message.content : []));
}

/** A request's conversation as role and text per message (other blocks by their type), for comparing histories. */
export function conversationOf(body: unknown): Array<{ role: string; text: string }> {
  return messagesOf(body).map((message) => ({
    role: message.role,
    text: (typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content)
      .map((block) => (block.type === "text" ? String(block.text) : block.type))
      .join(""),
  }));
}

export function toolResultText(body: unknown, toolUseId: string): string | undefined {
  for (const block of blocksOf(body)) {
    if (block.type !== "tool_result" || block.tool_use_id !== toolUseId) continue;
    const content = block.content;
    if (typeof content === "string") return content;
    return (content as Array<{ type: string; text?: string }>).map((part) => part.text ?? "").join("");
  }
  return undefined;
}

export function toolResultBlock(body: unknown, toolUseId: string): AnthropicBlock | undefined {
  return blocksOf(body).find((block) => block.type === "tool_result" && block.tool_use_id === toolUseId);
}

/** Model requests of Claude Code's main loop (not count_tokens or side requests). */
export function modelRequests(double: ModelDouble) {
  return double.requests.filter((request) => request.api === "anthropic");
}

export function toolExecutions(events: readonly PiEvent[]): PiEvent[] {
  return events.filter((event) => event.type === "tool_execution_end");
}

/** The text parts of a message, joined. */
export function textOf(message: Record<string, unknown> | undefined): string {
  const content = (message?.content ?? []) as Array<{ type: string; text?: string }>;
  return content.map((part) => (part.type === "text" ? (part.text ?? "") : "")).join("");
}

export function lastAssistant(events: readonly PiEvent[]): Record<string, unknown> | undefined {
  const ends = events.filter(
    (event) => event.type === "message_end" && (event.message as { role?: string }).role === "assistant",
  );
  return ends.at(-1)?.message as Record<string, unknown> | undefined;
}
