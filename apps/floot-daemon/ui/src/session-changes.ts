import type { FlootSessionChange } from "@bridgeworks/protocol";
import { parseEvent, readEventStream } from "./api.js";

/**
 * Reads `GET /v1/changes` and hands each session change to `onChange` until `signal` aborts. The stream
 * never ends by itself: its end or failure throws `Unreachable` (see `readEventStream`).
 */
export async function watchSessionChanges(
  onOpen: () => void,
  onChange: (change: FlootSessionChange) => void,
  signal: AbortSignal,
): Promise<void> {
  await readEventStream("/v1/changes", signal, onOpen, (event) => {
    if (event.name === "session") onChange(parseEvent<FlootSessionChange>(event));
    return undefined;
  });
}
