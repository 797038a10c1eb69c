import type { FlootApiError, TurnEventEnvelope } from "@bridgeworks/protocol";
import { authorization, forgetAccess, NotSignedIn } from "./credential.js";

/** The daemon answered with an error. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The daemon did not answer (restarting, stopped, the network blinked). */
export class Unreachable extends Error {
  /** What made the daemon unreachable: a network error, or a sentence. */
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/**
 * The Authorization header (an access token), once the daemon proved its identity. No credential: a 401
 * (signed out); a failed proof (the port is held by something else) counts as unreachable and sends nothing.
 */
async function authorize(): Promise<string> {
  try {
    return await authorization();
  } catch (error) {
    if (error instanceof NotSignedIn) throw new ApiError(401, "not_signed_in", error.message);
    throw new Unreachable(error);
  }
}

/**
 * The daemon stopped answering (a request failed, a stream broke or ended): whoever answers on this
 * port next must prove its identity again before a request carries anything.
 */
export function unreachable(error: unknown): Unreachable {
  forgetAccess();
  return new Unreachable(error);
}

/**
 * `fetch` with the page's access token. A 401 means the daemon does not know that token (it restarted,
 * or the token ran out): the page gets a new one, the identity proof first, and asks once more.
 */
async function fetchAuthorized(path: string, init: RequestInit & { headers: Record<string, string> }) {
  for (let attempt = 0; ; attempt++) {
    const authorization = await authorize();
    let response: Response;
    try {
      response = await fetch(path, {
        ...init,
        credentials: "omit",
        cache: "no-store",
        headers: { ...init.headers, authorization },
      });
    } catch (error) {
      if (init.signal?.aborted) throw error;
      throw unreachable(error);
    }
    if (response.status !== 401 || attempt > 0) return response;
    await response.body?.cancel();
    forgetAccess();
  }
}

// The page authenticates with an access token it got by signing a nonce of the daemon's with its own
// key: it never holds the API token, and no cookie exists for another page on 127.0.0.1 to ride on.
export async function api<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const response = await fetchAuthorized(path, {
    method,
    headers: body !== undefined ? { "content-type": "application/json" } : {},
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw await errorOf(response);
  return (await response.json()) as T;
}

async function errorOf(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as FlootApiError;
    return new ApiError(response.status, body.error.code, body.error.message);
  } catch {
    return new ApiError(response.status, "http", `HTTP ${response.status}`);
  }
}

/** One Server-Sent Event: its `event:` name (absent for the default) and its `data:` lines joined. */
export interface ServerSentEvent {
  name: string | undefined;
  data: string;
}

/**
 * Reads a Server-Sent Events stream with the page's access token (through `fetch`: no EventSource, which
 * could not send it) until `onEvent` answers "done". Every other end of the stream, a break, an end or bytes
 * that are not events, throws `Unreachable`, which forgets the daemon's proof: whoever answers on the
 * port next proves its identity before a request carries anything. The one place that decides what a
 * broken stream means. An error answer is an `ApiError`; an abort of `signal`, and whatever `onEvent`
 * throws, pass through unchanged.
 */
export async function readEventStream(
  path: string,
  signal: AbortSignal,
  onOpen: () => void,
  onEvent: (event: ServerSentEvent) => "done" | undefined,
): Promise<void> {
  const response = await fetchAuthorized(path, { headers: { accept: "text/event-stream" }, signal });
  if (!response.ok || !response.body) throw await errorOf(response);
  onOpen();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    let chunk: ReadableStreamReadResult<string>;
    try {
      chunk = await reader.read();
    } catch (error) {
      if (signal.aborted) throw error;
      throw unreachable(error);
    }
    if (chunk.done) throw unreachable("the event stream ended");
    buffer += chunk.value;
    for (let split = buffer.indexOf("\n\n"); split !== -1; split = buffer.indexOf("\n\n")) {
      const lines = buffer.slice(0, split).split("\n");
      buffer = buffer.slice(split + 2);
      const data = lines.filter((line) => line.startsWith("data: ")).map((line) => line.slice(6));
      if (data.length === 0) continue;
      const name = lines.find((line) => line.startsWith("event: "))?.slice(7);
      if (onEvent({ name, data: data.join("\n") }) === "done") {
        await reader.cancel().catch(() => {});
        return;
      }
    }
  }
}

/**
 * Follows a turn's events from `from` until its terminal event. A stream that breaks or ends before it
 * throws `Unreachable`: the caller reattaches by asking for the current turn again.
 */
export async function followTurn(
  turnId: string,
  from: number,
  onEnvelope: (envelope: TurnEventEnvelope) => void,
  signal: AbortSignal,
): Promise<void> {
  await readEventStream(
    `/v1/turns/${encodeURIComponent(turnId)}/follow?from=${from}`,
    signal,
    () => {},
    (event) => {
      const envelope = parseEvent<TurnEventEnvelope>(event);
      onEnvelope(envelope);
      return envelope.event.type === "terminal" ? "done" : undefined;
    },
  );
}

/** An event's data; data that is not JSON means the port's answerer is not the daemon. */
export function parseEvent<T>(event: ServerSentEvent): T {
  try {
    return JSON.parse(event.data) as T;
  } catch (error) {
    throw unreachable(error);
  }
}

/** An event arrived past the next expected index: the page reloads the missing ones instead of guessing. */
export class GapError extends Error {}
