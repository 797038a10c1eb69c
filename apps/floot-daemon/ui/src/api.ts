import type { FlootApiError, TurnEventEnvelope } from "@bridgeworks/protocol";
import { authorization, forgetVerification, NotSignedIn } from "./credential.js";

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
 * The Authorization header, once the daemon proved its identity. No credential: a 401 (signed out);
 * a failed proof (the port is held by something else) counts as unreachable and sends nothing.
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
 * port next must prove its identity again before a request carries the token.
 */
export function unreachable(error: unknown): Unreachable {
  forgetVerification();
  return new Unreachable(error);
}

// The page authenticates by its origin-bound token (sessionStorage): it never holds the API token, and
// no cookie exists for another page on 127.0.0.1 to ride on.
export async function api<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const auth = await authorize();
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: "omit",
      cache: "no-store",
      headers: { authorization: auth, ...(body !== undefined && { "content-type": "application/json" }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw unreachable(error);
  }
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

/**
 * Opens a Server-Sent Events stream with the page's token (read through `fetch`: no EventSource, which
 * could not send it). A failure to connect is `Unreachable`, an error answer an `ApiError`.
 */
export async function openEventStream(
  path: string,
  signal: AbortSignal,
): Promise<Response & { body: ReadableStream<Uint8Array> }> {
  const auth = await authorize();
  let response: Response;
  try {
    response = await fetch(path, {
      credentials: "omit",
      cache: "no-store",
      headers: { accept: "text/event-stream", authorization: auth },
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw error;
    throw unreachable(error);
  }
  if (!response.ok || !response.body) throw await errorOf(response);
  return response as Response & { body: ReadableStream<Uint8Array> };
}

/**
 * Follows a turn's events from `from` over Server-Sent Events until its terminal event. A stream that
 * breaks or ends early throws `Unreachable`: the caller reattaches by asking for the current turn again.
 */
export async function followTurn(
  turnId: string,
  from: number,
  onEnvelope: (envelope: TurnEventEnvelope) => void,
  signal: AbortSignal,
): Promise<void> {
  const response = await openEventStream(
    `/v1/turns/${encodeURIComponent(turnId)}/follow?from=${from}`,
    signal,
  );
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let ended = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let split = buffer.indexOf("\n\n");
      while (split !== -1) {
        const data = buffer
          .slice(0, split)
          .split("\n")
          .filter((line) => line.startsWith("data: "))
          .map((line) => line.slice(6))
          .join("\n");
        buffer = buffer.slice(split + 2);
        split = buffer.indexOf("\n\n");
        if (!data) continue;
        const envelope = JSON.parse(data) as TurnEventEnvelope;
        onEnvelope(envelope);
        if (envelope.event.type === "terminal") ended = true;
      }
    }
  } catch (error) {
    if (signal.aborted) throw error;
    if (error instanceof GapError) throw error;
    throw unreachable(error);
  }
  if (!ended) throw unreachable("the event stream ended before the turn did");
}

/** An event arrived past the next expected index: the page reloads the missing ones instead of guessing. */
export class GapError extends Error {}
