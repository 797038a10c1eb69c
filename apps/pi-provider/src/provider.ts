import { query } from "@anthropic-ai/claude-agent-sdk";
import { type Clock, createSystemClock, idleTimeoutFromEnv } from "@bridgeworks/delivery-reconciler";
import type { ClaudeSessionRecord, ClaudeTurnReceipt } from "@bridgeworks/protocol";
import { describeError } from "@bridgeworks/runtime";
import { BridgeSession } from "./bridge-session.js";
import { resolveClaudeExecutable } from "./claude-executable.js";
import { ClaudeQuery } from "./claude-query.js";
import { createDiagLog, type DiagWriter, diagLogPath } from "./diag-log.js";
import { AssistantEventStream } from "./event-stream.js";
import { type KeepWarmPolicy, type KeepWarmSetting, keepWarmFromEnv } from "./keep-warm.js";
import { claudeCodeModels, PROVIDER_API, PROVIDER_NAME } from "./models.js";
import { normalizeContext, type ProviderRegistration } from "./pi-adapter.js";
import type { PiContext, PiModel, PiStreamOptions } from "./pi-types.js";
import { type QueryInputs, querySpec, settingsOf } from "./query-inputs.js";
import type { RateLimitState } from "./rate-limits.js";
import { AccountLimits, type SpendPolicy, spendPolicyFromEnv } from "./spend-guard.js";
import { offerSuccessor } from "./successor-query.js";
import { PiTurn } from "./turn.js";

export interface ClaudeCodeProviderOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly clock?: Clock;
  readonly runQuery?: typeof query;
  readonly diag?: DiagWriter;
  readonly warn?: (line: string) => void;
  /** Where Pi shows provider status (its footer): Claude Code's rate-limit state and the spending guard. */
  readonly status?: (text: string | undefined) => void;
}

/** What `/claude-code doctor` reads of the provider itself. */
export interface ProviderFacts {
  readonly spend: SpendPolicy;
  /** Why the next request would be refused, if it would. */
  readonly refusal: string | undefined;
  readonly limits: readonly RateLimitState[];
  /** As Claude Code reported it (its `init`); undefined until a query started. */
  readonly claudeCodeVersion: string | undefined;
  readonly keepWarm: KeepWarmSetting;
}

export interface ClaudeCodeProvider {
  readonly registration: ProviderRegistration;
  /**
   * A Pi session selected a claude-code model (or started with one): start its Claude Code query
   * ahead of the first prompt, telling it nothing (no model request until a prompt).
   */
  prepare(sessionId: string, inputs: QueryInputs): Promise<void>;
  /**
   * Pi is replacing this session with a new one (`/new`): start the next session's Claude Code now,
   * with `inputs` (the ending session's settings), for that session to adopt (`successor-query.ts`).
   */
  prestartSuccessor(inputs: QueryInputs): void;
  /** The Pi session moved to another provider: its Claude Code process ends, its session stays resumable. */
  suspend(sessionId: string): Promise<void>;
  /** A Pi session recorded by an earlier Pi process (`--continue`): resume that Claude session. */
  restore(sessionId: string, record: ClaudeSessionRecord): void;
  /** What to record in the Pi session so a later process resumes its Claude session. */
  record(sessionId: string): ClaudeSessionRecord | undefined;
  /** The receipt of the Pi run that just ended (undefined if it asked nothing of Claude Code). */
  takeReceipt(sessionId: string): ClaudeTurnReceipt | undefined;
  /** Pi's status line now (limits, the guard). */
  statusLine(): string | undefined;
  facts(): ProviderFacts;
  /** Ends every Claude Code query (waiting for each process to exit) and checks every session's quiescence. */
  dispose(): Promise<void>;
}

export const WARM_START_VARIABLE = "CLAUDE_BRIDGE_WARM_START";

/**
 * `CLAUDE_BRIDGE_WARM_START`: `0`/`off`/`false` starts Claude Code only at a session's first prompt;
 * unset, `1`/`on`/`true` start it when the session selects a claude-code model. Anything else is
 * named in a warning and the default holds.
 */
export function warmStartFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; enabled: boolean } | { ok: false; enabled: true; error: string } {
  const value = env[WARM_START_VARIABLE]?.trim().toLowerCase();
  if (value === undefined || value === "" || value === "1" || value === "on" || value === "true")
    return { ok: true, enabled: true };
  if (value === "0" || value === "off" || value === "false") return { ok: true, enabled: false };
  return {
    ok: false,
    enabled: true,
    error: `${WARM_START_VARIABLE} must be 0, off, false, 1, on or true; got ${JSON.stringify(env[WARM_START_VARIABLE])}, so Claude Code starts ahead as by default`,
  };
}

/** Sessions keyed by Pi's `sessionId`: each owns one long-lived Claude Code query. */
export function createClaudeCodeProvider(options: ClaudeCodeProviderOptions): ClaudeCodeProvider {
  const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
  const diag =
    options.diag ??
    createDiagLog(diagLogPath(options.env), (error) =>
      warn(`claude-code: diagnostics log unavailable: ${String(error)}`),
    );
  const idle = idleTimeoutFromEnv(options.env);
  const warm = warmStartFromEnv(options.env);
  if (!warm.ok) warn(`claude-code: ${warm.error}`);
  const clock = options.clock ?? createSystemClock();
  const spend = spendPolicyFromEnv(options.env);
  if (!spend.ok) warn(`claude-code: ${spend.error}`);
  const limits = new AccountLimits(spend.policy, () => clock.now());
  const keepWarmSetting = keepWarmFromEnv(options.env);
  if (!keepWarmSetting.ok) warn(`claude-code: ${keepWarmSetting.error}`);
  const keepWarm: KeepWarmPolicy = {
    setting: keepWarmSetting.setting,
    allowed: () => limits.refusal() === undefined,
    usingOverage: () => limits.usingOverage(),
  };
  let claudeCodeVersion: string | undefined;
  const claudeExecutable = resolveClaudeExecutable(options.env);
  const sessions = new Map<string, BridgeSession>();
  let oneShots = 0;

  const sessionFor = (key: string): BridgeSession => {
    let session = sessions.get(key);
    if (!session) {
      session = new BridgeSession({
        sessionKey: key,
        env: options.env,
        cwd: options.cwd,
        clock,
        idleTimeoutMs: idle.ok ? idle.timeoutMs : 0,
        diag,
        claudeExecutable,
        runQuery: options.runQuery ?? query,
        warn,
        limits,
        keepWarm,
        limitsChanged: () => options.status?.(limits.statusLine()),
        noteClaudeCodeVersion: (version) => {
          claudeCodeVersion = version;
        },
      });
      sessions.set(key, session);
    }
    return session;
  };

  const streamSimple = (model: PiModel, context: PiContext, streamOptions: PiStreamOptions = {}) => {
    const stream = new AssistantEventStream();
    if (!idle.ok) {
      new PiTurn(stream, model, clock.now()).fail("error", `claude-code: ${idle.error}`);
      return stream;
    }
    const normalized = normalizeContext(context);
    // Pi's one-shot requests: compaction and branch summaries. Pi 1.x marks them (cacheRetention
    // "none"); Pi 0.73 sends them with no session id and no tools, a split turn's two summaries at
    // once. Each gets a session of its own, whatever id it carries (sharing one, the second would
    // supersede the first, or end a live conversation's query), and its Claude Code process ends
    // with the answer. Without a session id but with tools, requests share "default": a tool round
    // needs the query to live on.
    const oneShot =
      streamOptions.cacheRetention === "none" ||
      (streamOptions.sessionId === undefined && normalized.tools.length === 0);
    const key = oneShot ? `one-shot-${++oneShots}` : (streamOptions.sessionId ?? "default");
    const session = sessionFor(key);
    if (oneShot) {
      void stream.result().then(() => {
        if (sessions.get(key) === session) sessions.delete(key);
        return session.dispose();
      });
    }
    session.serve(model, normalized, streamOptions, stream).catch((error: unknown) => {
      if (!stream.isEnded)
        new PiTurn(stream, model, clock.now()).fail("error", `claude-code: ${describeError(error)}`);
    });
    return stream;
  };

  return {
    registration: {
      name: "Claude Code",
      api: PROVIDER_API,
      // Pi requires both when models are given; neither is used (Claude Code has its own endpoint and auth).
      baseUrl: "claude-code://agent-sdk",
      apiKey: "claude-code-uses-its-own-auth",
      models: claudeCodeModels,
      streamSimple,
    },
    prepare: (sessionId, inputs) =>
      idle.ok && warm.enabled ? sessionFor(sessionId).prepare(inputs) : Promise.resolve(),
    prestartSuccessor: (inputs) => {
      if (!idle.ok || !warm.enabled) return;
      const host = {
        runQuery: options.runQuery ?? query,
        env: options.env,
        cwd: options.cwd,
        claudeExecutable,
        keepWarm,
      };
      offerSuccessor(
        settingsOf(inputs),
        (handlers, issued) =>
          new ClaudeQuery(querySpec(host, inputs, { kind: "fresh", tellFrom: 0 }, issued, true), handlers),
      );
    },
    suspend: async (sessionId) => {
      await sessions.get(sessionId)?.suspend();
    },
    restore: (sessionId, record) => sessionFor(sessionId).restore(record),
    record: (sessionId) => sessions.get(sessionId)?.record,
    takeReceipt: (sessionId) => sessions.get(sessionId)?.receipts.take(),
    statusLine: () => limits.statusLine(),
    facts: () => ({
      spend: spend.policy,
      refusal: limits.refusal()?.message,
      limits: limits.reported(),
      claudeCodeVersion,
      keepWarm: keepWarm.setting,
    }),
    async dispose() {
      await Promise.all([...sessions.values()].map((session) => session.dispose()));
      sessions.clear();
    },
  };
}

export { PROVIDER_NAME };
