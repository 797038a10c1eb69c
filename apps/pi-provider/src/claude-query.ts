import type {
  Options,
  Query,
  SDKControlInitializeResponse,
  SDKMessage,
  SDKUserMessage,
  query as sdkQuery,
} from "@anthropic-ai/claude-agent-sdk";
import { describeError } from "@bridgeworks/runtime";
import type { ClaudeUserBlock } from "./content.js";
import {
  affordableSideQuestions,
  claudeCacheTtlMs,
  KeepWarm,
  type KeepWarmOutcome,
  type KeepWarmPolicy,
  keepWarmEveryMs,
} from "./keep-warm.js";
import { MCP_SERVER_NAME, MCP_TOOL_PREFIX, PiToolServer, type ToolCallHandler } from "./mcp-tools.js";
import type { PiStreamOptions, PiTool } from "./pi-types.js";
import { PromptQueue } from "./prompt-queue.js";
import { WarmUp, type WarmUpOutcome } from "./warm-up.js";

/** Everything one Claude Code process is started with. */
export interface ClaudeQuerySpec {
  /** The Agent SDK's `query` (injectable for tests). */
  readonly runQuery: typeof sdkQuery;
  /** The environment Claude Code runs with (the Agent SDK's `env` replaces the child's entirely). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly claudeExecutable: string | undefined;
  readonly model: string;
  readonly systemPrompt: string;
  readonly reasoning: PiStreamOptions["reasoning"];
  /** Claude's session to go on with, rewound to the chain entry `at` when given. */
  readonly resume: { readonly sessionId: string; readonly at?: string } | undefined;
  readonly tools: readonly PiTool[];
  /** The ids of the tool calls this query's Claude made (filled by whoever reads its messages). */
  readonly issued: Set<string>;
  /** Started ahead of its first prompt: run Claude Code's prompt path once, asking the model nothing. */
  readonly warmUp: boolean;
  /** Keep Claude Code's prompt cache alive while it waits for Pi's tools; undefined: never. */
  readonly keepWarm?: KeepWarmPolicy | undefined;
}

export interface ClaudeQueryHandlers {
  /** An MCP `tools/call` of one of Pi's tools. */
  readonly onToolCall: ToolCallHandler;
  /** Each SDK message, until the query is closed. */
  readonly onMessage: (message: SDKMessage) => void;
  /** Claude Code ended on its own (exit, crash): why, with the tail of what it wrote on stderr. */
  readonly onEnded: (detail: string) => void;
  /** A keep-warm side question was asked (or could not be). */
  readonly onKeepWarm?: (outcome: KeepWarmOutcome) => void;
}

const STDERR_TAIL_CHARS = 2_000;
const INTERRUPT_GRACE_MS = 2_000;
/** The SDK's cleanup waits up to 2 s for the process to exit after its input closed. */
const EXIT_GRACE_MS = 5_000;
/** The ledger's own deadlines end every wait; this only keeps Claude Code's from firing first. */
const MCP_TOOL_TIMEOUT_MS = 2 * 60 * 60_000;

/**
 * Pi owns the project's instructions (its system prompt carries AGENTS.md and CLAUDE.md, and replaces
 * Claude Code's). Claude Code's built-in project-instructions plugin adds nothing here (with no setting
 * sources it reads no project file) but runs hooks on every prompt (`prompt.submit` 48-68 ms and
 * `turn.start` 14 ms in Claude Code 2.1.332's debug log): off. Built-in plugins are keyed
 * `<name>@builtin` in `enabledPlugins` (read in the 2.1.332 binary: `${r}@${Ps}` in the built-in
 * plugin loader, with `e?.enabledPlugins?.[n]` deciding, default on).
 */
export const CLAUDE_SETTINGS = { enabledPlugins: { "agents-md@builtin": false } } as const;

/** The environment Claude Code gets: Pi's (and a provider-scoped overlay), with our defaults. */
export function claudeEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  overlay: Readonly<Record<string, string | undefined>> | undefined,
): Record<string, string | undefined> {
  return {
    ...base,
    ...overlay,
    // Pi's auto-retry is the one retry layer the user sees; Claude Code's own retries would hide
    // a rate limit for minutes.
    CLAUDE_CODE_MAX_RETRIES: base.CLAUDE_CODE_MAX_RETRIES ?? "0",
    // Pi compacts its own history; Claude Code compacting underneath would desynchronise the two.
    DISABLE_AUTO_COMPACT: "1",
    ENABLE_CLAUDEAI_MCP_SERVERS: "0",
    // Pi's system prompt replaces Claude Code's, so Claude Code's git status section is never sent;
    // this stops Claude Code from computing it anyway (six `git` processes at its start in a
    // repository, competing with a first prompt). Read in the 2.1.332 binary's embedded source:
    // `function yWt(){let e=s.CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS;if(e!==void 0)return!e;...}` gates
    // `gitStatusPrefetch` ("Failed to get git status for system context"); measured: the request
    // Claude Code sends is the same with and without it (docs/first-token.md).
    CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS: base.CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS ?? "1",
  };
}

/**
 * One Claude Code process driven through the Agent SDK with streaming input: Pi's messages go in
 * with `push`, Claude's come out through `onMessage`, Pi's tools are served over in-process MCP.
 */
export class ClaudeQuery {
  readonly tools: PiToolServer;
  readonly issued: ReadonlySet<string>;
  /** Settles once Claude Code has answered the SDK's initialize (or failed to): it is up. */
  readonly started: Promise<void>;
  /** How the warm-up ended, for a query started ahead of its first prompt. */
  readonly warmedUp: Promise<WarmUpOutcome> | undefined;
  private readonly input = new PromptQueue();
  private readonly query: Query;
  private readonly warmUp: WarmUp | undefined;
  private readonly keepWarm: KeepWarm | undefined;
  /** Tool calls Claude Code waits on now (their MCP handlers have not answered). */
  private waitingOnTools = 0;
  /** Claude Code runs on a Claude subscription (its `init` says no API key is used). */
  private subscription = false;
  /** The prompt tokens of Claude Code's latest model request (its `message_start` usage). */
  private promptTokens: number | undefined;
  private prompted = false;
  private closing = false;
  private closed: Promise<void> | undefined;
  private stderrTail = "";

  constructor(
    spec: ClaudeQuerySpec,
    private handlers: ClaudeQueryHandlers,
  ) {
    this.issued = spec.issued;
    this.tools = new PiToolServer((call) => this.answerToolCall(call));
    this.tools.setTools(spec.tools);
    this.warmUp = spec.warmUp ? new WarmUp() : undefined;
    this.warmedUp = this.warmUp?.outcome;
    this.query = spec.runQuery({ prompt: this.input, options: this.options(spec) });
    this.keepWarm = this.keepWarmFor(spec);
    const initialized = (this.query as Partial<Query>).initializationResult?.();
    this.started = initialized ? initialized.then(noop, noop) : Promise.resolve();
    if (this.warmUp) void this.sendWarmUp(this.warmUp, initialized);
    void this.consume();
  }

  get isClosing(): boolean {
    return this.closing;
  }

  /** Hands the query to another owner (a Pi session adopting a query started ahead for it). */
  rebind(handlers: ClaudeQueryHandlers): void {
    this.handlers = handlers;
  }

  /** One user message; `next` puts it ahead of tool results Claude Code is about to send. */
  push(blocks: readonly ClaudeUserBlock[], priority?: "next"): void {
    if (blocks.length === 0) return;
    this.prompted = true;
    const message: SDKUserMessage = {
      type: "user",
      message: { role: "user", content: [...blocks] },
      parent_tool_use_id: null,
      ...(priority ? { priority } : {}),
    };
    this.input.push(message);
  }

  /**
   * An interrupt ends the turn inside Claude Code (no further model request); close() then ends the
   * process. A Claude Code too stuck to answer the interrupt is closed after a short wait. Resolves
   * once the process has exited (the SDK's own cleanup waits for that, bounded), so nothing outlives
   * the Pi session that closes it.
   */
  close(): Promise<void> {
    this.closed ??= this.shutDown();
    return this.closed;
  }

  private async shutDown(): Promise<void> {
    this.closing = true;
    this.keepWarm?.stop();
    await Promise.race([this.query.interrupt().catch(() => undefined), delay(INTERRUPT_GRACE_MS)]);
    this.input.close();
    this.query.close();
    await Promise.race([this.query.return(undefined).catch(() => undefined), delay(EXIT_GRACE_MS)]);
  }

  private options(spec: ClaudeQuerySpec): Options {
    return {
      cwd: spec.cwd,
      env: { ...spec.env },
      model: spec.model,
      tools: [],
      allowedTools: [`${MCP_TOOL_PREFIX}*`],
      // Never bypassPermissions: Claude Code refuses it as root. Pi's tools are allowed by name.
      permissionMode: "dontAsk",
      mcpServers: {
        [MCP_SERVER_NAME]: {
          type: "sdk",
          name: MCP_SERVER_NAME,
          instance: this.tools.server as never,
          timeout: MCP_TOOL_TIMEOUT_MS,
        },
      },
      strictMcpConfig: true,
      settingSources: [],
      settings: CLAUDE_SETTINGS,
      includePartialMessages: true,
      ...(spec.systemPrompt ? { systemPrompt: spec.systemPrompt } : {}),
      ...(spec.reasoning
        ? { effort: spec.reasoning === "minimal" ? "low" : spec.reasoning }
        : { thinking: { type: "disabled" } }),
      ...(spec.resume
        ? { resume: spec.resume.sessionId, ...(spec.resume.at ? { resumeSessionAt: spec.resume.at } : {}) }
        : {}),
      ...(spec.claudeExecutable ? { pathToClaudeCodeExecutable: spec.claudeExecutable } : {}),
      ...(this.warmUp ? { hooks: { UserPromptSubmit: [{ hooks: [this.warmUp.hook] }] } } : {}),
      stderr: (data) => {
        this.stderrTail = (this.stderrTail + data).slice(-STDERR_TAIL_CHARS);
      },
    };
  }

  private async sendWarmUp(
    warmUp: WarmUp,
    initialized: Promise<SDKControlInitializeResponse> | undefined,
  ): Promise<void> {
    const init = await initialized?.catch(() => undefined);
    const message = this.closing ? warmUp.skip("the query closed first") : warmUp.start(init, this.prompted);
    if (message) this.input.push(message);
  }

  private async consume(): Promise<void> {
    let failure: unknown;
    try {
      for await (const message of this.query) {
        if (this.closing) continue;
        this.notePromptSize(message);
        const warmUp = this.warmUp?.read(message);
        if (warmUp === "answered") this.endAnsweredWarmUp();
        else if (warmUp === undefined) this.handlers.onMessage(message);
      }
    } catch (error) {
      failure = error;
    }
    if (this.closing) return;
    this.closing = true;
    this.keepWarm?.stop();
    const reason = failure ? describeError(failure) : "the query ended";
    this.handlers.onEnded([reason, this.stderrTail.trim()].filter(Boolean).join("\n"));
  }

  /** Pi's tool call, answered by the handlers; while any is waiting, the prompt cache is kept warm. */
  private async answerToolCall(call: Parameters<ToolCallHandler>[0]): ReturnType<ToolCallHandler> {
    if (this.waitingOnTools++ === 0) this.keepWarm?.start();
    try {
      return await this.handlers.onToolCall(call);
    } finally {
      if (--this.waitingOnTools === 0) this.keepWarm?.stop();
    }
  }

  private notePromptSize(message: SDKMessage): void {
    if (message.type === "system" && message.subtype === "init")
      this.subscription = message.apiKeySource === "none";
    if (message.type !== "stream_event" || message.parent_tool_use_id !== null) return;
    if (message.event.type !== "message_start") return;
    const usage = message.event.message.usage;
    this.promptTokens =
      usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
  }

  private keepWarmFor(spec: ClaudeQuerySpec): KeepWarm | undefined {
    const policy = spec.keepWarm;
    if (!policy || policy.setting.kind === "off") return undefined;
    // Claude Code's side question (its `/btw`): on the Agent SDK 0.3.332's Query, not in its types.
    const sideQuestion = (this.query as { askSideQuestion?: (question: string) => Promise<unknown> })
      .askSideQuestion;
    const ttlMs = () => claudeCacheTtlMs(spec.env, this.subscription, policy.usingOverage());
    return new KeepWarm({
      everyMs: () => keepWarmEveryMs(policy.setting, ttlMs()),
      allowed: policy.allowed,
      // Automatic: never more side questions than the rebuild they avoid would cost; an interval of
      // the user's own: as asked.
      budget: () =>
        policy.setting.kind === "auto" ? affordableSideQuestions(this.promptTokens, ttlMs()) : undefined,
      ask:
        typeof sideQuestion === "function"
          ? (question) => sideQuestion.call(this.query, question)
          : undefined,
      report: (outcome) => this.handlers.onKeepWarm?.(outcome),
      now: Date.now,
    });
  }

  /** Never expected (Claude Code said it registered the hook): this conversation is no longer Pi's. */
  private endAnsweredWarmUp(): void {
    void this.close();
    this.handlers.onEnded(
      "Claude Code sent the warm-up prompt to the model (the hook meant to block it did not); the query was ended",
    );
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function noop(): void {}
