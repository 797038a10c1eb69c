/**
 * Calls `stop` once on the first SIGINT or SIGTERM. A Ctrl-C reaches the daemon twice under
 * `npm start` (from the terminal and forwarded by the script): one stop, and a repeated signal must
 * not cut it short.
 */
export function onStopSignal(
  signals: Pick<NodeJS.Process, "on" | "off">,
  stop: (signal: NodeJS.Signals) => void,
): () => void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    stop(signal);
  };
  signals.on("SIGTERM", handle);
  signals.on("SIGINT", handle);
  return () => {
    signals.off("SIGTERM", handle);
    signals.off("SIGINT", handle);
  };
}
