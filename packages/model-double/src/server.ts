import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { sendJson } from "@bridgeworks/runtime";
import { anthropicErrorBody, anthropicEventStream, anthropicMessage } from "./anthropic.js";
import { openaiErrorBody, openaiEventStream, openaiResponse } from "./openai.js";
import { type IdGenerator, planAnswer, toolCallsOf } from "./plan.js";
import { PromptCacheModel } from "./prompt-cache.js";
import type { MatchableRequest, RecordedRequest, RecordedResponse, RequestKind } from "./recorded.js";
import { RequestLog, type WaitOptions } from "./request-log.js";
import { estimateTokens } from "./request-view.js";
import { type ApiName, parseScript, type ScriptError, type ScriptInput } from "./script.js";
import { createStepSelector } from "./step-selector.js";
import { pausesOf, playEventStream, playJsonAnswer } from "./wire.js";

export interface ModelDoubleOptions {
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Clock for `receivedAt`; default `Date.now`. */
  now?: () => number;
  /** Id source for tool calls, messages and output items; default random hex after the prefix. */
  generateId?: IdGenerator;
  /** Called once per request after it is recorded (the CLI logs with it). */
  onRequest?: (request: RecordedRequest) => void;
}

export interface ModelDouble {
  /** Base URL such as `http://127.0.0.1:PORT`: claude's ANTHROPIC_BASE_URL; codex takes `${url}/v1`. */
  readonly url: string;
  /** Every request in arrival order, appended live. */
  readonly requests: readonly RecordedRequest[];
  /** Model requests that no script step matched (each got a 500 naming it). */
  readonly unmatched: readonly RecordedRequest[];
  /** Requests the double could not answer as scripted: unmatched, unresolvable tool names, bodies not JSON. */
  readonly failures: readonly RecordedRequest[];
  waitForRequest(
    predicate: (request: RecordedRequest) => boolean,
    options?: WaitOptions,
  ): Promise<RecordedRequest>;
  /** Ends open (also stalled) streams and the server; safe to call more than once. */
  close(): Promise<void>;
}

type Route = RequestKind;

function routeOf(method: string, path: string): Route {
  if (method !== "POST") return "unknown";
  if (path === "/v1/messages") return "anthropic";
  if (path === "/v1/messages/count_tokens") return "count_tokens";
  // The OpenAI SDK appends `/responses` to whatever base URL it was given.
  if (path === "/v1/responses" || path === "/responses") return "openai";
  return "unknown";
}

function defaultIdGenerator(prefix: string): string {
  return `${prefix}${randomBytes(12).toString("hex")}`;
}

export async function startModelDouble(
  script: ScriptInput,
  options: ModelDoubleOptions = {},
): Promise<ModelDouble> {
  const validScript = parseScript(script);
  const now = options.now ?? Date.now;
  const generateId = options.generateId ?? defaultIdGenerator;
  const log = new RequestLog();
  const selector = createStepSelector(validScript.steps);
  const promptCache = validScript.promptCache
    ? new PromptCacheModel(validScript.promptCache.ttlMs)
    : undefined;
  const unmatched: RecordedRequest[] = [];
  const failures: RecordedRequest[] = [];
  const closing = new AbortController();

  const record = (request: MatchableRequest, response: RecordedResponse): RecordedRequest => {
    const recorded: RecordedRequest = { ...request, response };
    log.append(recorded);
    if (response.failure !== undefined) failures.push(recorded);
    options.onRequest?.(recorded);
    return recorded;
  };

  const handle = async (incoming: IncomingMessage, response: ServerResponse): Promise<void> => {
    const receivedAt = now();
    const rawBody = await readBody(incoming);
    const target = new URL(incoming.url ?? "/", "http://model-double");
    const method = incoming.method ?? "GET";
    const api = routeOf(method, target.pathname);
    const parsedBody = parseBody(rawBody);
    const request: MatchableRequest = {
      index: log.requests.length,
      api,
      method,
      path: target.pathname,
      query: Object.fromEntries(target.searchParams),
      headers: flattenHeaders(incoming.headers),
      body: parsedBody.value,
      receivedAt,
    };

    if (api === "unknown") {
      const message = `model-double: no route for ${method} ${target.pathname}`;
      record(request, { status: 404, stepIndex: null, toolCalls: [] });
      return sendJson(response, 404, anthropicErrorBody(404, message));
    }
    if (api === "count_tokens") {
      record(request, { status: 200, stepIndex: null, toolCalls: [] });
      return sendJson(response, 200, { input_tokens: estimateTokens(rawBody) });
    }
    const errorBody = api === "anthropic" ? anthropicErrorBody : openaiErrorBody;
    const fail = (status: number, failure: string, stepIndex: number | null): RecordedRequest => {
      const recorded = record(request, { status, stepIndex, toolCalls: [], failure });
      sendJson(response, status, errorBody(status, failure));
      return recorded;
    };

    if (!parsedBody.ok) {
      fail(400, `model-double: request #${request.index} body is not JSON`, null);
      return;
    }
    let stepIndex: number | null;
    try {
      stepIndex = selector.select({ ...request, api });
    } catch (error) {
      fail(500, `model-double: a match predicate threw on request #${request.index}: ${String(error)}`, null);
      return;
    }
    if (stepIndex === null) {
      unmatched.push(fail(500, `model-double: no script step matched request #${request.index}`, null));
      return;
    }
    const step = validScript.steps[stepIndex]!.response;
    if (step.error !== undefined) {
      record(request, { status: step.error.status, stepIndex, toolCalls: [] });
      return sendScriptedError(response, step.error, errorBody, step.headers);
    }
    const cache = api === "anthropic" ? promptCache?.use(request.body, receivedAt) : undefined;
    const outcome = planAnswer(
      { ...step, events: step.events ?? [] },
      { api, body: request.body, requestIndex: request.index, generateId, cache },
    );
    if (!outcome.ok) {
      fail(500, outcome.failure, stepIndex);
      return;
    }
    const { plan } = outcome;
    record(request, {
      status: 200,
      stepIndex,
      messageId: plan.messageId,
      toolCalls: toolCallsOf(plan),
      usage: { ...plan.usage },
    });

    const lifetime = lifetimeOf(response, closing.signal);
    if (wantsStream(api, request.body)) {
      const steps = api === "anthropic" ? anthropicEventStream(plan) : openaiEventStream(plan, generateId);
      await playEventStream(steps, response, lifetime, step.headers);
    } else {
      const body = api === "anthropic" ? anthropicMessage(plan) : openaiResponse(plan, generateId);
      await playJsonAnswer(pausesOf(plan.items), body, response, lifetime, step.headers);
    }
  };

  const server = createServer((incoming, response) => {
    handle(incoming, response).catch((error: unknown) => {
      // A handler bug must not leave the client hanging; the double's own tests surface it.
      if (!response.headersSent)
        sendJson(response, 500, anthropicErrorBody(500, `model-double: ${String(error)}`));
      else response.destroy();
    });
  });
  await listen(server, options.port ?? 0, options.host ?? "127.0.0.1");
  const address = server.address() as AddressInfo;
  const hostPart = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${hostPart}:${address.port}`;

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= new Promise<void>((resolve) => {
      closing.abort();
      log.close("the double closed");
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closed;
  };

  return {
    url,
    requests: log.requests,
    unmatched,
    failures,
    waitForRequest: (predicate, waitOptions) => log.waitFor(predicate, waitOptions),
    close,
  };
}

function sendScriptedError(
  response: ServerResponse,
  error: ScriptError,
  errorBody: (status: number, message: string, type?: string) => unknown,
  extraHeaders: Record<string, string> = {},
): void {
  const headers: Record<string, string> = {
    ...extraHeaders,
    ...(error.retryAfter === undefined ? {} : { "retry-after": String(error.retryAfter) }),
  };
  sendJson(response, error.status, errorBody(error.status, error.message, error.type), headers);
}

/** Anthropic streams only on `stream: true`; the Responses endpoint streams unless told `stream: false`. */
function wantsStream(api: ApiName, body: unknown): boolean {
  const stream =
    typeof body === "object" && body !== null ? (body as { stream?: unknown }).stream : undefined;
  return api === "anthropic" ? stream === true : stream !== false;
}

/** Aborts when the double closes or the client goes away before the answer is complete. */
function lifetimeOf(response: ServerResponse, closing: AbortSignal): AbortSignal {
  const clientGone = new AbortController();
  response.on("close", () => clientGone.abort());
  return AbortSignal.any([closing, clientGone.signal]);
}

function readBody(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    incoming.on("error", reject);
  });
}

function parseBody(raw: string): { ok: boolean; value: unknown } {
  if (raw.length === 0) return { ok: false, value: undefined };
  try {
    return { ok: true, value: JSON.parse(raw) };
  } catch {
    return { ok: false, value: raw };
  }
}

function flattenHeaders(headers: IncomingMessage["headers"]): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}

function listen(server: ReturnType<typeof createServer>, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
