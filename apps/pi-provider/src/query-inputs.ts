import type { query as sdkQuery } from "@anthropic-ai/claude-agent-sdk";
import { type ClaudeQuerySpec, claudeEnvironment } from "./claude-query.js";
import type { KeepWarmPolicy } from "./keep-warm.js";
import { toolsKey } from "./mcp-tools.js";
import type { PiModel, PiStreamOptions, PiTool } from "./pi-types.js";
import type { QueryAction } from "./query-planner.js";

/** What a Claude Code query is started with, from Pi's side of one request (or of a warm start). */
export interface QueryInputs {
  readonly model: PiModel;
  readonly systemPrompt: string;
  readonly tools: readonly PiTool[];
  readonly reasoning: PiStreamOptions["reasoning"];
  /** Pi 1.x: provider-scoped environment. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

/**
 * What a running query is fixed to: a request (or a warm start) with other settings needs another
 * query. The tools are part of it so a warm query never serves a first request with other tools.
 */
export function settingsOf(inputs: QueryInputs): string {
  return JSON.stringify([
    inputs.model.id,
    inputs.systemPrompt,
    inputs.reasoning ?? null,
    inputs.env ?? null,
    toolsKey(inputs.tools),
  ]);
}

/** What every query of a provider shares: how Claude Code is run, and where. */
export interface ClaudeCodeHost {
  readonly runQuery: typeof sdkQuery;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly claudeExecutable: string | undefined;
  readonly keepWarm?: KeepWarmPolicy | undefined;
}

/** The Claude Code process a planner's start action asks for. */
export function querySpec(
  host: ClaudeCodeHost,
  inputs: QueryInputs,
  action: Extract<QueryAction, { kind: "resume" | "resume-at" | "fresh" }>,
  issued: Set<string>,
  warmUp: boolean,
): ClaudeQuerySpec {
  return {
    runQuery: host.runQuery,
    env: claudeEnvironment(host.env, inputs.env),
    cwd: host.cwd,
    claudeExecutable: host.claudeExecutable,
    model: inputs.model.id,
    systemPrompt: inputs.systemPrompt,
    reasoning: inputs.reasoning,
    resume:
      action.kind === "fresh"
        ? undefined
        : { sessionId: action.sessionId, ...(action.kind === "resume-at" ? { at: action.at } : {}) },
    tools: inputs.tools,
    issued,
    warmUp,
    keepWarm: host.keepWarm,
  };
}
