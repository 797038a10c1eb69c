import { channel } from "node:diagnostics_channel";

/**
 * Named moments of a daemon's work. Each is published on `node:diagnostics_channel` as
 * `floot:<point>`, synchronously and only when something subscribed: a tracer can observe the daemon
 * at that exact instant, and the crash tests stop it there (their preload, never part of the bundle).
 */
export const tracePoints = [
  /** A turn is about to start: still `accepted`, its workspace made, nothing journaled yet. */
  "turn:starting",
  /** A turn is `spawning` (marker journaled); its CLI is not started yet. */
  "turn:before-spawn",
  /** The CLI exists; its pid is not journaled yet. */
  "turn:spawned",
  /** Its pid and start time are journaled (`running`). */
  "turn:running",
  /** One stream event was handed to the journal (it may still wait in the batch). */
  "turn:event",
  /** A gate request arrived; nothing is committed yet. */
  "gate:received",
  /** The call is committed; the hook has not been answered yet. */
  "gate:committed",
  /** At start: the turns whose CLI the keeper kept are known (some are); recovery has not run yet. */
  "adoption:found",
  /** An adopted turn's CLI is attached to again; the turn is not `running` under this daemon yet. */
  "adoption:attached",
  /** Recovery fenced every leftover CLI; no decision is applied yet. */
  "recovery:fenced",
  /** Recovery applied one decision (more may follow). */
  "recovery:applied",
  /** `daemon.json` is written (clients take the daemon for ready); the start has not returned yet. */
  "daemon:announced",
] as const;
export type TracePoint = (typeof tracePoints)[number];

export type Trace = (point: TracePoint, data: Readonly<Record<string, unknown>>) => void;

export const traceChannelPrefix = "floot:";

/** Publishes each point on its diagnostics channel; a point nobody subscribed to costs a lookup. */
export function diagnosticsTrace(): Trace {
  const channels = new Map(tracePoints.map((point) => [point, channel(`${traceChannelPrefix}${point}`)]));
  return (point, data) => {
    const target = channels.get(point);
    if (target?.hasSubscribers) target.publish(data);
  };
}

export const noTrace: Trace = () => {};
