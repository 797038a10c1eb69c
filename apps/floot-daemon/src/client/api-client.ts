import { request as httpRequest, type IncomingMessage } from "node:http";
import {
  FlootApiError,
  type FlootDaemonFile,
  type FlootDaemonStatus,
  type TurnEventEnvelope,
} from "@bridgeworks/protocol";
import { ClientError, startDaemonHint } from "./client-error.js";

export { ClientError } from "./client-error.js";
export { checkSocket, locateDaemonSocket } from "./daemon-socket.js";

/**
 * The daemon's HTTP API over its unix socket. The socket is authenticated by its file mode (0600 in a
 * 0700 dir of the user's, checked by `locateDaemonSocket`), so no token is sent at all.
 */
export class FlootClient {
  readonly socketPath: string;

  constructor(daemon: Pick<FlootDaemonFile, "socket">) {
    this.socketPath = daemon.socket;
  }

  async request<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const response = await this.#send(
      method,
      path,
      {
        ...(payload !== undefined && { "content-type": "application/json" }),
      },
      payload,
    );
    const text = await readAll(response);
    let value: unknown;
    try {
      value = text === "" ? undefined : JSON.parse(text);
    } catch {
      throw new ClientError(
        `HTTP ${response.statusCode}: the daemon's answer is not JSON`,
        response.statusCode,
      );
    }
    if ((response.statusCode ?? 500) >= 400) throw errorOf(response.statusCode ?? 500, value);
    return value as T;
  }

  /** Where the browser reaches this daemon's web UI, as the daemon itself says over the socket. */
  async webUrl(): Promise<string> {
    const status = await this.request<FlootDaemonStatus>("GET", "/v1/status");
    if (status.port === undefined)
      throw new ClientError("the daemon did not say which port its web UI is on");
    return `http://127.0.0.1:${status.port}`;
  }

  /** Follows a turn's events over SSE from `from`, resuming from the last index if the stream drops. */
  async follow(
    turnId: string,
    from: number,
    onEvent: (envelope: TurnEventEnvelope) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    let next = from;
    for (let attempt = 0; ; attempt += 1) {
      if (signal?.aborted) return;
      const path = `/v1/turns/${encodeURIComponent(turnId)}/follow?from=${next}`;
      const response = await this.#send("GET", path, { accept: "text/event-stream" }, undefined, signal);
      if ((response.statusCode ?? 500) >= 400) {
        const text = await readAll(response);
        let value: unknown;
        try {
          value = text ? JSON.parse(text) : undefined;
        } catch {
          value = undefined;
        }
        throw errorOf(response.statusCode ?? 500, value);
      }
      let ended = false;
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for await (const chunk of response) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true });
          let split = buffer.indexOf("\n\n");
          while (split !== -1) {
            const block = buffer.slice(0, split);
            buffer = buffer.slice(split + 2);
            const data = block
              .split("\n")
              .filter((line) => line.startsWith("data: "))
              .map((line) => line.slice(6))
              .join("\n");
            if (data) {
              const envelope = JSON.parse(data) as TurnEventEnvelope;
              next = envelope.index + 1;
              onEvent(envelope);
              if (envelope.event.type === "terminal") ended = true;
            }
            split = buffer.indexOf("\n\n");
          }
        }
      } catch (error) {
        if (signal?.aborted) return;
        if (attempt > 20) throw error;
      }
      if (ended || signal?.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /**
   * Sends one request. A connect the kernel refuses with EAGAIN (the socket's listen backlog is full,
   * as under a flood of connections) never sent a byte, so it is tried again for a while.
   */
  async #send(
    method: string,
    path: string,
    headers: Record<string, string>,
    payload?: string,
    signal?: AbortSignal,
  ): Promise<IncomingMessage> {
    const deadline = Date.now() + backlogWaitMs;
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      try {
        return await this.#sendOnce(method, path, headers, payload, signal);
      } catch (error) {
        const backlogFull = (error as NodeJS.ErrnoException).code === "EAGAIN";
        if (signal?.aborted) throw error;
        if (!backlogFull || Date.now() + pause > deadline)
          throw unreachable(this.socketPath, error as NodeJS.ErrnoException);
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  #sendOnce(
    method: string,
    path: string,
    headers: Record<string, string>,
    payload: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(
        {
          socketPath: this.socketPath,
          // A fresh connection per request: a kept-alive one can be closed by the daemon's idle timer
          // just as a request goes out on it (after a long pause), and that request fails with ECONNRESET.
          agent: false,
          method,
          path,
          headers: { host: "localhost", ...headers },
          ...(signal && { signal }),
        },
        resolve,
      );
      request.on("error", reject);
      request.end(payload);
    });
  }
}

/** How long a request waits for room in the daemon's listen backlog before it says so. */
const backlogWaitMs = 10_000;

/**
 * A daemon that was killed (SIGKILL, a crash, the machine going down) leaves its socket file behind
 * with nothing listening on it: that is said as such, with what to do.
 */
function unreachable(socketPath: string, error: NodeJS.ErrnoException): ClientError {
  const stale = error.code === "ECONNREFUSED" || error.code === "ENOENT";
  return new ClientError(
    `the floot daemon at ${socketPath} is not reachable (${error.message})` +
      (stale ? `; it is not running (it stopped without closing its socket); ${startDaemonHint}` : ""),
  );
}

function errorOf(status: number, value: unknown): ClientError {
  const parsed = FlootApiError.safeParse(value);
  return parsed.success
    ? new ClientError(parsed.data.error.message, status, parsed.data.error.code)
    : new ClientError(`HTTP ${status}`, status);
}

async function readAll(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
