import type { FlootSessionChange } from "@bridgeworks/protocol";
import { openEventStream, unreachable } from "./api.js";

/**
 * Reads `GET /v1/changes` (Server-Sent Events) and hands each session change to `onChange` until
 * `signal` aborts. The stream never ends by itself: its end or failure throws `Unreachable`, and the
 * next request proves the daemon's identity again (whoever holds the port now may be another user).
 */
export async function watchSessionChanges(
  onOpen: () => void,
  onChange: (change: FlootSessionChange) => void,
  signal: AbortSignal,
): Promise<void> {
  const response = await openEventStream("/v1/changes", signal);
  onOpen();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (let split = buffer.indexOf("\n\n"); split !== -1; split = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, split).split("\n");
        buffer = buffer.slice(split + 2);
        const data = block.find((line) => line.startsWith("data: "));
        if (data && block.includes("event: session"))
          onChange(JSON.parse(data.slice(6)) as FlootSessionChange);
      }
    }
  } catch (error) {
    if (signal.aborted) throw error;
    throw unreachable(error);
  }
  throw unreachable("the change stream ended");
}
