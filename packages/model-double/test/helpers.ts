import { afterEach } from "vitest";
import {
  type ModelDouble,
  type ModelDoubleOptions,
  type ScriptInput,
  startModelDouble,
} from "../src/index.js";

export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Parses a complete SSE body into its events; every frame must have `event:` and JSON `data:`. */
export function parseSse(text: string): SseEvent[] {
  return text
    .split("\n\n")
    .filter((frame) => frame.trim().length > 0)
    .map((frame) => {
      const lines = frame.split("\n");
      const event = lines.find((line) => line.startsWith("event: "))?.slice("event: ".length);
      const data = lines.find((line) => line.startsWith("data: "))?.slice("data: ".length);
      if (event === undefined || data === undefined) throw new Error(`malformed SSE frame: ${frame}`);
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

/** Starts doubles that are closed after each test. */
export function useDoubles(): (script: ScriptInput, options?: ModelDoubleOptions) => Promise<ModelDouble> {
  const started: ModelDouble[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((double) => double.close()));
  });
  return async (script, options) => {
    const double = await startModelDouble(script, options);
    started.push(double);
    return double;
  };
}

export function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

export function anthropicRequest(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: "claude-test-model",
    max_tokens: 1024,
    stream: true,
    messages: [{ role: "user", content: [{ type: "text", text }] }],
    ...extra,
  };
}

export function openaiRequest(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: "gpt-test-model",
    stream: true,
    input: [{ type: "message", role: "user", content: [{ type: "input_text", text }] }],
    ...extra,
  };
}

export async function streamAnthropic(
  double: ModelDouble,
  body: Record<string, unknown>,
): Promise<SseEvent[]> {
  const response = await postJson(`${double.url}/v1/messages?beta=true`, body);
  if (response.status !== 200) throw new Error(`status ${response.status}: ${await response.text()}`);
  return parseSse(await response.text());
}

export async function streamOpenai(double: ModelDouble, body: Record<string, unknown>): Promise<SseEvent[]> {
  const response = await postJson(`${double.url}/v1/responses`, body);
  if (response.status !== 200) throw new Error(`status ${response.status}: ${await response.text()}`);
  return parseSse(await response.text());
}

/** Deterministic ids: prefix plus a counter. */
export function countingIds(): (prefix: string) => string {
  let next = 0;
  return (prefix) => {
    next += 1;
    return `${prefix}test${next}`;
  };
}

export const textOnly = (text: string) => ({ events: [{ type: "text" as const, text }] });
