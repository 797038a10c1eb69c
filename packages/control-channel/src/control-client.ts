import { randomBytes as cryptoRandomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import { RetireOutcome, RunFile, retireOutcomeHttpStatus } from "@bridgeworks/protocol";
import { controlHost, retirePath } from "./control-server.js";
import { isErrnoException } from "./errno.js";
import {
  bridgeProof,
  challengeAuthorization,
  macsEqual,
  mintNonce,
  parseServerChallenge,
  retireAuthorization,
  retireMac,
} from "./retire-proof.js";
import type { RandomBytes } from "./token.js";

/** What `POST /retire` came to, from the hook's side. */
export type PostRetireResult =
  /** The server answered 200, 202 or 500 with a matching outcome. */
  | { kind: "answered"; httpStatus: number; outcome: RetireOutcome }
  /** Nothing listens on the port: the bridge is gone (a stale run file, or a SIGKILL). */
  | { kind: "dead_port"; port: number }
  /**
   * What listens on the port did not prove it holds the run file's token (no proof, a wrong one, or
   * an answer that is no challenge at all): it is not the bridge, and nothing but a nonce was sent.
   */
  | { kind: "unproven"; port: number; reason: string }
  /** The bridge refused the proven request (401, 403, ...). */
  | { kind: "refused"; httpStatus: number; error: string }
  /** The server answered something that is not a retire outcome. */
  | { kind: "bad_answer"; httpStatus: number; error: string }
  | { kind: "timed_out"; timeoutMs: number }
  | { kind: "transport_error"; code: string; error: string };

export interface PostRetireOptions {
  /** An upper bound for the whole exchange, both requests; the server itself answers within 5 s. */
  timeoutMs?: number;
  /** The client nonce's source; default `crypto.randomBytes`. */
  randomBytes?: RandomBytes;
}

export const defaultPostRetireTimeoutMs = 10_000;
const maxAnswerBytes = 64 * 1024;

interface Answer {
  httpStatus: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

type Exchanged = { kind: "answer"; answer: Answer } | Exclude<PostRetireResult, { kind: "answered" }>;

/**
 * Retires the bridge a run file names, proving the token without sending it: a challenge with a
 * fresh nonce first, and only when the answer proves the token (for this run file's process and
 * port) the retire, authenticated by a MAC over the server's nonce.
 */
export async function postRetire(
  runFile: RunFile,
  options: PostRetireOptions = {},
): Promise<PostRetireResult> {
  const { port, token, pid, startTime } = RunFile.parse(runFile);
  const timeoutMs = options.timeoutMs ?? defaultPostRetireTimeoutMs;
  const deadline = performance.now() + timeoutMs;
  const clientNonce = mintNonce(options.randomBytes ?? cryptoRandomBytes);

  const challenged = await exchange(port, challengeAuthorization(clientNonce), deadline, timeoutMs);
  if (challenged.kind !== "answer") return challenged;
  const header = challenged.answer.headers["www-authenticate"];
  const challenge = typeof header === "string" ? parseServerChallenge(header) : undefined;
  if (challenged.answer.httpStatus !== 401 || challenge === undefined) {
    return {
      kind: "unproven",
      port,
      reason: `it answered the challenge with HTTP ${challenged.answer.httpStatus} and no proof`,
    };
  }
  const { serverNonce, proof } = challenge;
  const expected = bridgeProof(token, { clientNonce, serverNonce, process: { pid, startTime }, port });
  if (!macsEqual(proof, expected)) {
    return { kind: "unproven", port, reason: "its proof does not match the run file's token and process" };
  }

  const mac = retireMac(token, { clientNonce, serverNonce, port });
  const retired = await exchange(port, retireAuthorization(serverNonce, mac), deadline, timeoutMs);
  if (retired.kind !== "answer") return retired;
  return interpretAnswer(retired.answer);
}

/** One `POST /retire` with `authorization`, bounded by what is left until `deadline`. */
function exchange(
  port: number,
  authorization: string,
  deadline: number,
  timeoutMs: number,
): Promise<Exchanged> {
  const body = "{}";
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: Exchanged) => {
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
          authorization,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (response) => {
        const httpStatus = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxAnswerBytes) {
            settle({ kind: "bad_answer", httpStatus, error: "answer too large" });
            request.destroy();
          } else {
            chunks.push(chunk);
          }
        });
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          settle({ kind: "answer", answer: { httpStatus, headers: response.headers, text } });
        });
        response.on("error", (error) => settle(transportError(error)));
      },
    );

    const timer = setTimeout(
      () => {
        settle({ kind: "timed_out", timeoutMs });
        request.destroy();
      },
      Math.max(0, deadline - performance.now()),
    );

    request.on("error", (error) => {
      if (isErrnoException(error) && error.code === "ECONNREFUSED") settle({ kind: "dead_port", port });
      else settle(transportError(error));
    });
    request.end(body);
  });
}

function interpretAnswer({ httpStatus, text }: Answer): PostRetireResult {
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

function transportError(error: Error): Exclude<PostRetireResult, { kind: "answered" }> {
  const code = isErrnoException(error) && error.code ? error.code : "UNKNOWN";
  return { kind: "transport_error", code, error: error.message };
}
