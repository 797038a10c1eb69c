import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FlootApiError, FlootDaemonFile, type TurnEventEnvelope } from "@bridgeworks/protocol";
import { daemonFileName } from "../state-dir.js";

export class ClientError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Finds the daemon of `stateDir` through its `daemon.json`. */
export function readDaemonFile(stateDir: string): FlootDaemonFile {
  const path = join(stateDir, daemonFileName);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    throw new ClientError(
      `no floot daemon runs on ${stateDir} (${path} is missing); start one with: floot daemon`,
    );
  }
  const parsed = FlootDaemonFile.safeParse(JSON.parse(text));
  if (!parsed.success) throw new ClientError(`${path} is not a valid daemon file`);
  return parsed.data;
}

export class FlootClient {
  readonly baseUrl: string;
  readonly #token: string;

  constructor(daemon: Pick<FlootDaemonFile, "port" | "token">) {
    this.baseUrl = `http://127.0.0.1:${daemon.port}`;
    this.#token = daemon.token;
  }

  async request<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.#token}`,
          ...(body !== undefined && { "content-type": "application/json" }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new ClientError(
        `the floot daemon at ${this.baseUrl} is not reachable (${(error as Error).message})`,
      );
    }
    const text = await response.text();
    const value: unknown = text === "" ? undefined : JSON.parse(text);
    if (!response.ok) {
      const parsed = FlootApiError.safeParse(value);
      if (parsed.success) {
        throw new ClientError(parsed.data.error.message, response.status, parsed.data.error.code);
      }
      throw new ClientError(`HTTP ${response.status}`, response.status);
    }
    return value as T;
  }

  /** Follows a turn's events over SSE from `from`, resuming with Last-Event-ID if the stream drops. */
  async follow(
    turnId: string,
    from: number,
    onEvent: (envelope: TurnEventEnvelope) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    let next = from;
    for (let attempt = 0; ; attempt += 1) {
      const response = await fetch(
        `${this.baseUrl}/v1/turns/${encodeURIComponent(turnId)}/follow?from=${next}`,
        {
          headers: { authorization: `Bearer ${this.#token}`, accept: "text/event-stream" },
          ...(signal && { signal }),
        },
      );
      if (!response.ok || !response.body) {
        const text = await response.text();
        const parsed = FlootApiError.safeParse(text ? JSON.parse(text) : undefined);
        throw new ClientError(
          parsed.success ? parsed.data.error.message : `HTTP ${response.status}`,
          response.status,
        );
      }
      let ended = false;
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for await (const chunk of response.body) {
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
}
