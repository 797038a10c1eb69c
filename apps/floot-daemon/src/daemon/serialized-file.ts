import { writePrivateFileAtomic } from "@bridgeworks/control-channel";

/**
 * A private file rewritten whole (atomic, 0600) from state that changes while writes are in flight.
 * Concurrent atomic writes each rename their own snapshot into place in whatever order they finish, so
 * an older snapshot can land last and undo a newer change. Here writes run one at a time, each of
 * `contents()` as it is when that write starts, and a save asked for while one waits joins it: the
 * promise a save returns settles once a write that began after the call is on disk.
 */
export function serializedPrivateFile(
  path: string,
  contents: () => string,
  write: (path: string, contents: string) => Promise<void> = writePrivateFileAtomic,
): () => Promise<void> {
  let last: Promise<void> = Promise.resolve();
  let waiting: Promise<void> | undefined;
  return () => {
    if (waiting !== undefined) return waiting;
    const next = last
      .catch(() => {})
      .then(() => {
        waiting = undefined;
        return write(path, contents());
      });
    waiting = next;
    last = next;
    return next;
  };
}
