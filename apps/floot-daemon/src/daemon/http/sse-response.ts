import type { IncomingMessage, ServerResponse } from "node:http";

export interface SseResponseOptions {
  heartbeatMs: number;
  /** Streams still open, so a closing server can end them. */
  openStreams: Set<ServerResponse>;
}

/**
 * Starts a Server-Sent Events answer: its headers, a keep-alive comment every `heartbeatMs`, and a
 * place in `openStreams` until it ends. The returned `end` runs once (the client going away calls it
 * too): it stops the heartbeat, calls `onEnd`, and ends the response.
 */
export function startSseResponse(
  request: IncomingMessage,
  response: ServerResponse,
  { heartbeatMs, openStreams }: SseResponseOptions,
  onEnd: () => void,
): () => void {
  response.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-store",
    connection: "keep-alive",
    "x-content-type-options": "nosniff",
  });
  // The headers go out with the first write made in this tick (a follower's replay), in one send, or
  // alone at its end: a stream with nothing to say yet is open for its client at once either way.
  // (`headersSent` is true from `writeHead` on; flushing headers that went out already sends nothing.)
  process.nextTick(() => {
    if (!response.writableEnded && !response.destroyed) response.flushHeaders();
  });
  openStreams.add(response);
  const heartbeat = setInterval(() => response.write(": keep-alive\n\n"), heartbeatMs);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    openStreams.delete(response);
    onEnd();
    response.end();
  };
  request.on("close", end);
  response.on("close", end);
  return end;
}
