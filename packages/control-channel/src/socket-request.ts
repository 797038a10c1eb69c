import { connect as netConnect, type Socket } from "node:net";
import { describeError } from "@bridgeworks/runtime";

// One request and one answer over a bridge generation's socket, beside MCP: after its token line
// `{"token": "…", "channel": "request"}` the client sends one JSON line and the server answers one
// JSON line, `{"ok": true, "answer": …}` or `{"ok": false, "error": "…"}`, and ends the connection.
// Node builtins only: the gate hook that uses it starts for every tool call.

/** The channel a token line names for a one-shot request (absent: MCP). */
export const requestChannelName = "request";
/** The longest request line the server reads, newline excluded. */
export const maxRequestBytes = 64 * 1024;
/** The longest answer line the client reads. */
export const maxAnswerBytes = 64 * 1024;

/** Answers one request of an authorized connection; what it returns (or throws) goes back to the client. */
export type SocketRequestHandler<Context> = (context: Context, request: unknown) => unknown;

export interface ServeRequestOptions<Context> {
  context: Context;
  /** Bytes that arrived after the token line. */
  initialData: Buffer;
  handler: SocketRequestHandler<Context>;
  /** How long the request line may take to arrive. */
  timeoutMs: number;
  onError(message: string): void;
}

/** Serves one request on an authorized connection, then ends it. */
export function serveSocketRequest<Context>(socket: Socket, options: ServeRequestOptions<Context>): void {
  let buffered = options.initialData;
  let done = false;
  const fail = (message: string) => {
    if (done) return;
    done = true;
    options.onError(message);
    socket.destroy();
  };
  const timer = setTimeout(() => fail("request line timed out"), options.timeoutMs);
  socket.once("close", () => clearTimeout(timer));

  const onLine = (line: Buffer) => {
    done = true;
    clearTimeout(timer);
    let request: unknown;
    try {
      request = JSON.parse(line.toString("utf8"));
    } catch {
      answer(socket, { ok: false, error: "the request line is not JSON" });
      return;
    }
    Promise.resolve()
      .then(() => options.handler(options.context, request))
      .then(
        (value) => answer(socket, { ok: true, answer: value ?? null }),
        (error: unknown) => answer(socket, { ok: false, error: describeError(error) }),
      );
  };
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    const newline = buffered.indexOf(0x0a);
    if (newline === -1) {
      if (buffered.length > maxRequestBytes) fail("request line too long");
      return;
    }
    socket.off("data", onData);
    socket.pause();
    if (newline > maxRequestBytes) fail("request line too long");
    else onLine(buffered.subarray(0, newline));
  };
  if (buffered.length > 0) {
    onData(Buffer.alloc(0));
    if (done) return;
  }
  socket.on("data", onData);
  socket.resume();
}

function answer(
  socket: Socket,
  envelope: { ok: true; answer: unknown } | { ok: false; error: string },
): void {
  if (socket.destroyed) return;
  let line: string;
  try {
    line = `${JSON.stringify(envelope)}\n`;
  } catch (error) {
    line = `${JSON.stringify({ ok: false, error: `the answer could not be encoded: ${describeError(error)}` })}\n`;
  }
  socket.end(line);
}

export type SocketRequestResult =
  /** The server's handler returned `answer`. */
  | { kind: "answered"; answer: unknown }
  /** The server's handler threw, or refused the request line. */
  | { kind: "failed"; message: string }
  /** Nothing listens at the socket path (or it is not a socket). */
  | { kind: "unreachable"; message: string }
  /** The connection closed before an answer: a refused token, or the server went away. */
  | { kind: "closed" }
  | { kind: "timed-out" }
  | { kind: "bad-answer"; message: string };

export interface SendSocketRequestOptions {
  socketPath: string;
  /** Sent in the token line only, never logged. */
  token: string;
  request: unknown;
  timeoutMs: number;
  /** Injectable for tests; defaults to `net.connect(path)`. */
  connect?: (path: string) => Socket;
}

/**
 * Sends one request to a bridge generation's socket and waits, at most `timeoutMs`, for its answer. A
 * connect refused with EAGAIN (the listen backlog is full: a flood, a busy server) sent nothing and is
 * tried again within the same time.
 */
export function sendSocketRequest(options: SendSocketRequestOptions): Promise<SocketRequestResult> {
  return new Promise((resolve) => {
    let settled = false;
    let connected = false;
    let received = Buffer.alloc(0);
    let socket: Socket | undefined;
    let retry: NodeJS.Timeout | undefined;
    let pause = 5;
    const settle = (result: SocketRequestResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(retry);
      socket?.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => settle({ kind: "timed-out" }), options.timeoutMs);
    const attempt = () => {
      const current = (options.connect ?? netConnect)(options.socketPath);
      socket = current;
      let refused = false;
      current.on("error", (error: NodeJS.ErrnoException) => {
        if (!connected && error.code === "EAGAIN") {
          refused = true;
          retry = setTimeout(attempt, pause);
          pause = Math.min(pause * 2, 100);
        } else if (!connected) settle({ kind: "unreachable", message: error.code ?? error.message });
        else settle({ kind: "closed" });
      });
      current.on("close", () => {
        if (!refused) settle(connected ? { kind: "closed" } : { kind: "unreachable", message: "closed" });
      });
      current.on("connect", () => {
        connected = true;
        current.write(`${JSON.stringify({ token: options.token, channel: requestChannelName })}\n`);
        current.write(`${JSON.stringify(options.request)}\n`);
      });
      current.on("data", (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const newline = received.indexOf(0x0a);
        if (newline === -1) {
          if (received.length > maxAnswerBytes) settle({ kind: "bad-answer", message: "answer too long" });
          return;
        }
        settle(parseEnvelope(received.subarray(0, newline).toString("utf8")));
      });
    };
    attempt();
  });
}

function parseEnvelope(line: string): SocketRequestResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { kind: "bad-answer", message: "the answer is not JSON" };
  }
  if (typeof value !== "object" || value === null) return { kind: "bad-answer", message: "not an object" };
  const envelope = value as { ok?: unknown; answer?: unknown; error?: unknown };
  if (envelope.ok === true) return { kind: "answered", answer: envelope.answer };
  if (envelope.ok === false && typeof envelope.error === "string")
    return { kind: "failed", message: envelope.error };
  return { kind: "bad-answer", message: "the answer is neither ok nor an error" };
}
