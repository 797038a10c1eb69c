import { toolsKey } from "./mcp-tools.js";
import type { PiModel, PiStreamOptions, PiTool } from "./pi-types.js";

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
