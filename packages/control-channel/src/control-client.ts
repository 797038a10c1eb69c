import { request as httpRequest } from "node:http";
import { RetireOutcome, RunFile, retireOutcomeHttpStatus } from "@bridgeworks/protocol";
import { controlHost, retirePath } from "./control-server.js";
import { isErrnoException } from "./errno.js";

/** What `POST /retire` came to, from the hook's side. */
export type PostRetireResult =
  /** The server answered 200, 202 or 500 with a matching outcome. */
  | { kind: "answered"; httpStatus: number; outcome: RetireOutcome }
  /** Nothing listens on the port: the bridge is gone (a stale run file, or a SIGKILL). */
  | { kind: "dead_port"; port: number }
  /** The server refused the request (401, 403, ...), e.g. a reused port now held by someone else. */
  | { kind: "refused"; httpStatus: number; error: string }
  /** The server answered something that is not a retire outcome. */
  | { kind: "bad_answer"; httpStatus: number; error: string }
  | { kind: "timed_out"; timeoutMs: number }
  | { kind: "transport_error"; code: string; error: string };

export interface PostRetireOptions {
  /** An upper bound for the whole exchange; the server itself answers within 5 s. */
  timeoutMs?: number;
}

export const defaultPostRetireTimeoutMs = 10_000;
const maxAnswerBytes = 64 * 1024;

/** POSTs `/retire` to the control server a run file names. The token travels only in a header. */
export async function postRetire(
  runFile: RunFile,
  options: PostRetireOptions = {},
): Promise<PostRetireResult> {
  const { port, token } = RunFile.parse(runFile);
  const timeoutMs = options.timeoutMs ?? defaultPostRetireTimeoutMs;
  const body = "{}";

  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: PostRetireResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };

    const request = httpRequest(
      {
        host: controlHost,
        port,
        method: "POST",
        path: retirePath,
        agent: false,
        headers: {
          // Set explicitly: node leaves the port out of Host for port 80, and the server wants it always.
          host: `${controlHost}:${port}`,
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxAnswerBytes) {
            settle({ kind: "bad_answer", httpStatus: response.statusCode ?? 0, error: "answer too large" });
            request.destroy();
          } else {
            chunks.push(chunk);
          }
        });
        response.on("end", () => {
          settle(interpretAnswer(response.statusCode ?? 0, Buffer.concat(chunks).toString("utf8")));
        });
        response.on("error", (error) => settle(transportError(error)));
      },
    );

    const timer = setTimeout(() => {
      settle({ kind: "timed_out", timeoutMs });
      request.destroy();
    }, timeoutMs);

    request.on("error", (error) => {
      if (isErrnoException(error) && error.code === "ECONNREFUSED") settle({ kind: "dead_port", port });
      else settle(transportError(error));
    });
    request.end(body);
  });
}

function interpretAnswer(httpStatus: number, text: string): PostRetireResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: "bad_answer", httpStatus, error: "answer is not JSON" };
  }
  const outcome = RetireOutcome.safeParse(json);
  if (outcome.success) {
    if (retireOutcomeHttpStatus[outcome.data.status] === httpStatus) {
      return { kind: "answered", httpStatus, outcome: outcome.data };
    }
    return {
      kind: "bad_answer",
      httpStatus,
      error: `status ${outcome.data.status} came with HTTP ${httpStatus}`,
    };
  }
  const error =
    typeof json === "object" && json !== null && "error" in json && typeof json.error === "string"
      ? json.error
      : `HTTP ${httpStatus}`;
  return httpStatus >= 400
    ? { kind: "refused", httpStatus, error }
    : { kind: "bad_answer", httpStatus, error };
}

function transportError(error: Error): PostRetireResult {
  const code = isErrnoException(error) && error.code ? error.code : "UNKNOWN";
  return { kind: "transport_error", code, error: error.message };
}
