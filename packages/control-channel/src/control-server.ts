import { randomBytes as cryptoRandomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ControlProcess, ControlToken, RetireOutcome, retireOutcomeHttpStatus } from "@bridgeworks/protocol";
import { describeError, sendJson } from "@bridgeworks/runtime";
import { type HttpConnectionLimits, limitHttpConnections } from "./connection-limits.js";
import {
  bridgeProof,
  challengeScheme,
  macsEqual,
  mintNonce,
  PendingChallenges,
  parseRetireAuthorization,
  proofScheme,
  retireMac,
  serverChallenge,
} from "./retire-proof.js";
import type { RandomBytes } from "./token.js";

export const controlHost = "127.0.0.1";
export const retirePath = "/retire";
export const maxRetireBodyBytes = 1024;
export const defaultAnswerWithinMs = 5000;

/**
 * The hook sends one challenge, then one retire, each on a connection of its own: a handful of
 * connections is all a bridge ever needs, and nothing is kept idle for long.
 */
export const defaultControlConnectionLimits: HttpConnectionLimits = {
  maxConnections: 32,
  maxIdleConnections: 8,
  idleTimeoutMs: 5_000,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
};

/** How long a challenge may be answered, and how many may wait at once. */
const challengeTtlMs = 10_000;
const maxPendingChallenges = 64;

/** How a retire ended: what the owner's supervised promise resolves to. */
export type SettledRetireOutcome = Exclude<RetireOutcome, { status: "running" }>;

/**
 * Asks the owner to retire. The owner starts the work on its own supervision and returns a promise of
 * how it ended; the server only waits on that promise, never runs the retire itself. A rejection counts
 * as `failed` with the error's message.
 */
export type RequestRetire = () => Promise<SettledRetireOutcome>;

export interface ControlServerOptions {
  token: ControlToken;
  /** The serving process itself (its pid and start time, as the run file names it): bound into each proof. */
  process: ControlProcess;
  retire: RequestRetire;
  /** How long a request waits for the retire before answering 202 `running`. */
  answerWithinMs?: number;
  /** The nonces' source; default `crypto.randomBytes`. */
  randomBytes?: RandomBytes;
  /** Default `defaultControlConnectionLimits`. */
  connectionLimits?: HttpConnectionLimits;
}

export interface ControlServer {
  readonly host: typeof controlHost;
  readonly port: number;
  /** Connections open and, of those, idle. */
  connectionCounts(): { open: number; idle: number };
  /** Stops listening and destroys every connection at once; never waits for a retire. Idempotent. */
  close(): Promise<void>;
}

interface Refusal {
  status: number;
  error: string;
  headers?: Record<string, string>;
}

/**
 * Serves only `POST /retire` on 127.0.0.1 (an ephemeral port). A request must carry
 * `Host: 127.0.0.1:<port>`, no `Origin`, and at most 1 KiB of JSON. The token never travels: a
 * request with `Authorization: Bee-Challenge nonce=<hex>` is answered 401 with the server's nonce and
 * its proof of the token (`WWW-Authenticate: Bee-Proof nonce=<hex>, proof=<hex>`), and the retire
 * itself carries `Authorization: Bee-Proof nonce=<server nonce>, mac=<hex>` (see `retire-proof.ts`).
 * No CORS request is ever approved. Concurrent requests join the retire that is running.
 */
export async function startControlServer(options: ControlServerOptions): Promise<ControlServer> {
  const token = ControlToken.parse(options.token);
  const owner = ControlProcess.parse(options.process);
  const answerWithinMs = options.answerWithinMs ?? defaultAnswerWithinMs;
  const randomBytes = options.randomBytes ?? cryptoRandomBytes;
  const challenges = new PendingChallenges({ ttlMs: challengeTtlMs, max: maxPendingChallenges });
  const closing = new AbortController();
  let running: Promise<SettledRetireOutcome> | undefined;
  let port = 0;

  /** Answers a challenge, or checks a retire's proof; a refusal for anything else. */
  function authenticate(request: IncomingMessage): Refusal | undefined {
    const authorizations = rawHeaderValues(request, "authorization");
    const authorization =
      authorizations.length === 1 ? parseRetireAuthorization(authorizations[0]!) : undefined;
    if (authorization?.scheme === "challenge") {
      const serverNonce = mintNonce(randomBytes);
      challenges.issue(serverNonce, authorization.clientNonce);
      const proof = bridgeProof(token, {
        clientNonce: authorization.clientNonce,
        serverNonce,
        process: owner,
        port,
      });
      return {
        status: 401,
        error: `answer the challenge: retire with ${proofScheme} nonce=<this nonce>, mac=<hex>`,
        headers: { "www-authenticate": serverChallenge(serverNonce, proof) },
      };
    }
    if (authorization?.scheme === "proof") {
      // Taken whatever the outcome: a nonce is good for one attempt.
      const clientNonce = challenges.take(authorization.serverNonce);
      const expected =
        clientNonce === undefined
          ? undefined
          : retireMac(token, { clientNonce, serverNonce: authorization.serverNonce, port });
      if (expected !== undefined && macsEqual(authorization.mac, expected)) return undefined;
    }
    return {
      status: 401,
      error: `a ${challengeScheme} or a valid ${proofScheme} authorization is required`,
      headers: { "www-authenticate": challengeScheme },
    };
  }

  function joinRetire(): Promise<SettledRetireOutcome> {
    if (running === undefined) {
      // Called from a microtask so that a retire that throws synchronously still becomes an outcome.
      const started = Promise.resolve()
        .then(() => options.retire())
        .then(validSettledOutcome, (error: unknown) => failedOutcome(error));
      running = started;
      void started.then(() => {
        if (running === started) running = undefined;
      });
    }
    return running;
  }

  async function answerRetire(): Promise<RetireOutcome> {
    const stillRunning = waitOrAbort(answerWithinMs, closing.signal);
    try {
      return await Promise.race([
        joinRetire(),
        stillRunning.promise.then((): RetireOutcome => ({ status: "running" })),
      ]);
    } finally {
      stillRunning.cancel();
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const refusal = refuseRequest(request, port) ?? authenticate(request) ?? refuseBody(request);
    if (refusal) return reply(response, refusal.status, { error: refusal.error }, refusal.headers);

    const body = await readBody(request, maxRetireBodyBytes);
    if (body.kind === "too_large") {
      return reply(response, 413, { error: `body must be at most ${maxRetireBodyBytes} bytes` });
    }
    if (body.kind === "aborted") return;
    if (body.text.trim() !== "" && !isJson(body.text)) {
      return reply(response, 400, { error: "body must be empty or JSON" });
    }

    const outcome = await answerRetire();
    reply(response, retireOutcomeHttpStatus[outcome.status], outcome);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => reply(response, 500, { error: "internal error" }));
  });
  // Bounds how long a client may take to send its request (the wait for a retire is bounded
  // separately), how many connections are held, and how long a silent one is kept.
  const limiter = limitHttpConnections(server, options.connectionLimits ?? defaultControlConnectionLimits);

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: controlHost, port: 0 }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;

  let closed: Promise<void> | undefined;
  return {
    host: controlHost,
    port,
    connectionCounts: () => limiter.counts(),
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

function refuseRequest(request: IncomingMessage, port: number): Refusal | undefined {
  // Raw headers, because node keeps only the first of duplicated Host and Authorization headers.
  const hosts = rawHeaderValues(request, "host");
  // A DNS-rebound page reaches 127.0.0.1 under its own host name; only the literal address is ours.
  if (hosts.length !== 1 || hosts[0] !== `${controlHost}:${port}`) {
    return { status: 403, error: `Host must be ${controlHost}:${port}` };
  }
  // Browsers send Origin; the hook never does. Refusing any Origin shuts out every web page.
  if (rawHeaderValues(request, "origin").length > 0) {
    return { status: 403, error: "requests carrying an Origin header are refused" };
  }
  if (request.url !== retirePath) {
    return { status: 404, error: "not found" };
  }
  // OPTIONS lands here too: no CORS preflight is ever approved.
  if (request.method !== "POST") {
    return { status: 405, error: "only POST is allowed", headers: { allow: "POST" } };
  }
  return undefined;
}

function refuseBody(request: IncomingMessage): Refusal | undefined {
  // A text/plain or form POST is a "simple" cross-origin request that skips the preflight.
  const contentType = request.headers["content-type"];
  if (contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() !== "application/json") {
    return { status: 415, error: "Content-Type must be application/json" };
  }
  const declaredLength = Number(request.headers["content-length"] ?? 0);
  if (declaredLength > maxRetireBodyBytes) {
    return { status: 413, error: `body must be at most ${maxRetireBodyBytes} bytes` };
  }
  return undefined;
}

function rawHeaderValues(request: IncomingMessage, name: string): string[] {
  const values: string[] = [];
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    if (request.rawHeaders[index]!.toLowerCase() === name) values.push(request.rawHeaders[index + 1]!);
  }
  return values;
}

type Body = { kind: "read"; text: string } | { kind: "too_large" } | { kind: "aborted" };

function readBody(request: IncomingMessage, maxBytes: number): Promise<Body> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (body: Body) => {
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onAbort);
      request.off("close", onAbort);
      resolve(body);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) finish({ kind: "too_large" });
      else chunks.push(chunk);
    };
    const onEnd = () => finish({ kind: "read", text: Buffer.concat(chunks).toString("utf8") });
    const onAbort = () => finish({ kind: "aborted" });
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("error", onAbort);
    request.on("close", onAbort);
  });
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function validSettledOutcome(value: unknown): SettledRetireOutcome {
  const parsed = RetireOutcome.safeParse(value);
  if (parsed.success && parsed.data.status !== "running") return parsed.data;
  return { status: "failed", error: "retire produced an invalid outcome" };
}

function failedOutcome(error: unknown): SettledRetireOutcome {
  return { status: "failed", error: describeError(error) || "retire failed" };
}

function waitOrAbort(ms: number, signal: AbortSignal): { promise: Promise<void>; cancel: () => void } {
  let cancel = () => {};
  const promise = new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    cancel = done;
    if (signal.aborted) done();
    else signal.addEventListener("abort", done);
  });
  return { promise, cancel };
}

function reply(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent || response.destroyed) return;
  // One request per connection: the hook sends one, and close() has nothing idle to wait for.
  sendJson(response, status, body, { ...headers, connection: "close" });
}
