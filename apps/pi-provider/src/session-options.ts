import type { query as sdkQuery } from "@anthropic-ai/claude-agent-sdk";
import type { Clock } from "@bridgeworks/delivery-reconciler";
import type { DiagWriter } from "./diag-log.js";
import type { KeepWarmPolicy } from "./keep-warm.js";
import type { AccountLimits } from "./spend-guard.js";

/** What a `BridgeSession` is given by its provider. */
export interface BridgeSessionOptions {
  /** Pi's `options.sessionId` (one Claude Code query per Pi session), `one-shot-<n>` for a one-shot request. */
  readonly sessionKey: string;
  /** The environment Claude Code runs with (Agent SDK `env` replaces the child's entirely). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly clock: Clock;
  readonly idleTimeoutMs: number;
  readonly diag: DiagWriter;
  readonly claudeExecutable: string | undefined;
  /** The Agent SDK's `query` (injectable for tests). */
  readonly runQuery: typeof sdkQuery;
  /** Human-readable warnings (stderr). */
  readonly warn: (line: string) => void;
  /** The account's limits and the spending guard, shared by every session of the provider. */
  readonly limits: AccountLimits;
  /** Claude Code reported something Pi's status line shows (a rate-limit event, a refusal). */
  readonly limitsChanged: () => void;
  /** Keeping Claude Code's prompt cache alive while Pi runs tools (undefined: never). */
  readonly keepWarm?: KeepWarmPolicy | undefined;
  /** Claude Code said which version it is (its `init`). */
  readonly noteClaudeCodeVersion: (version: string) => void;
}
