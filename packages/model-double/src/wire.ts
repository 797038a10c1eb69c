import type { ServerResponse } from "node:http";
import { sendJson } from "@bridgeworks/runtime";
import type { PlanItem, PlannedPause } from "./plan.js";

/** One step of what goes over the wire: an SSE event, or a pause scripted between events. */
export type WireStep = { kind: "event"; event: string; data: unknown } | PlannedPause;

export function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export function pausesOf(items: readonly PlanItem[]): PlannedPause[] {
  return items.filter(
    (item): item is PlannedPause => item.kind === "delay" || item.kind === "stall" || item.kind === "drop",
  );
}

/** Resolves after `ms` (never, when undefined) or as soon as `signal` aborts. */
export function pause(ms: number | undefined, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const finish = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      resolve();
    };
    const timer = ms === undefined ? undefined : setTimeout(finish, ms);
    signal.addEventListener("abort", finish, { once: true });
  });
}

/**
 * Sends events and honours pauses in order; true when all were played. When `signal` aborts (the double
 * closed or the client went away) the response is destroyed, so nothing half-written looks complete.
 */
async function playSteps(
  steps: readonly WireStep[],
  response: ServerResponse,
  signal: AbortSignal,
  send: (event: string, data: unknown) => Promise<void>,
): Promise<boolean> {
  let lastWrite = Promise.resolve();
  for (const step of steps) {
    if (signal.aborted) break;
    if (step.kind === "event") lastWrite = send(step.event, step.data);
    else if (step.kind === "drop") {
      // Let what was already sent reach the client, so the cut lands mid-message and not before it.
      await lastWrite;
      response.destroy();
      return false;
    } else await pause(step.ms, signal);
  }
  if (signal.aborted) {
    response.destroy();
    return false;
  }
  return true;
}

export async function playEventStream(
  steps: readonly WireStep[],
  response: ServerResponse,
  signal: AbortSignal,
  headers: Record<string, string> = {},
): Promise<void> {
  response.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  response.flushHeaders();
  response.socket?.setNoDelay(true);
  const completed = await playSteps(
    steps,
    response,
    signal,
    (event, data) => new Promise((resolve) => response.write(sseFrame(event, data), () => resolve())),
  );
  if (completed) response.end();
}

/** A non-streaming answer: scripted pauses happen before the single JSON body. */
export async function playJsonAnswer(
  pauses: readonly PlannedPause[],
  body: unknown,
  response: ServerResponse,
  signal: AbortSignal,
  headers: Record<string, string> = {},
): Promise<void> {
  const completed = await playSteps(pauses, response, signal, async () => {});
  if (completed) sendJson(response, 200, body, headers);
}
