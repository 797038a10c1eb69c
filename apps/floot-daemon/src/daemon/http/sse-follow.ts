import type { IncomingMessage, ServerResponse } from "node:http";
import type { TurnEventEnvelope, TurnRecord } from "@bridgeworks/protocol";
import type { Logger } from "@bridgeworks/runtime";
import { type FollowSource, followTurn } from "@bridgeworks/turn-journal";
import { sendError } from "./api-error.js";
import { indexParam, parseIndex } from "./body.js";
import type { SlicedQueue } from "./sliced-queue.js";
import { type SseResponseOptions, startSseResponse } from "./sse-response.js";

export interface SseFollowOptions extends SseResponseOptions {
  journal: { events: FollowSource };
  /**
   * Each live event's frame, encoded once for all its followers: a commit hands every follower of the
   * turn the same envelope objects, so a hundred followers cost one `JSON.stringify`, not a hundred.
   */
  frames: WeakMap<TurnEventEnvelope, string>;
  /** Where a follower's start (its headers, replay and subscription) waits for its slice of the loop. */
  starts: SlicedQueue;
  logger: Logger;
}

function frameOf(envelope: TurnEventEnvelope, frames: SseFollowOptions["frames"]): string {
  let frame = frames.get(envelope);
  if (frame === undefined) {
    frame = `id: ${envelope.index}\nevent: turn-event\ndata: ${JSON.stringify(envelope)}\n\n`;
    frames.set(envelope, frame);
  }
  return frame;
}

/**
 * Between two pages of a replay: the loop serves what waits (reads, live events) first, and a reader
 * that has not taken the last page yet is waited for, not buffered for (a follower from the start of a
 * long turn would otherwise hold the loop, and the daemon's memory, for all of it).
 */
function nextReplayPage(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    // After the loop's next turn, drained or not: a write the kernel took at once emits `drain` in a
    // tick, which would let the next page run before anything else.
    const goOn = () => setImmediate(resolve);
    if (!response.writableNeedDrain) {
      goOn();
      return;
    }
    const drained = () => {
      response.off("drain", drained);
      response.off("close", drained);
      goOn();
    };
    response.on("drain", drained);
    response.on("close", drained);
  });
}

/**
 * `GET /v1/turns/:id/follow`: Server-Sent Events, `id:` the event index, replayed from `?from=` or
 * `Last-Event-ID` + 1, then tailed live; the stream ends after the terminal event.
 */
export function followOverSse(
  request: IncomingMessage,
  response: ServerResponse,
  turn: TurnRecord,
  options: SseFollowOptions,
): void {
  const lastEventId = request.headers["last-event-id"];
  let from = indexParam(request, "from") ?? 0;
  if (typeof lastEventId === "string" && lastEventId !== "") {
    from = parseIndex(lastEventId, "Last-Event-ID", "must be an event index") + 1;
  }
  // A bad request was answered above; the start itself takes its turn with the other followers'.
  options.starts.run(() => {
    if (response.destroyed) return;
    try {
      startFollowing(request, response, turn, from, options);
    } catch (error) {
      sendError(response, error, options.logger);
    }
  });
}

function startFollowing(
  request: IncomingMessage,
  response: ServerResponse,
  turn: TurnRecord,
  from: number,
  { journal, heartbeatMs, openStreams, frames }: SseFollowOptions,
): void {
  let handle: ReturnType<typeof followTurn> | undefined;
  const end = startSseResponse(request, response, { heartbeatMs, openStreams }, () => handle?.close());
  const deliver = (events: TurnEventEnvelope[]) => {
    let chunk = "";
    for (const envelope of events) chunk += frameOf(envelope, frames);
    response.write(chunk);
    if (events.at(-1)?.event.type === "terminal") queueMicrotask(end);
  };
  handle = followTurn(journal.events, turn.id, from, deliver, { pause: () => nextReplayPage(response) });
  if (handle.closed) end();
}
