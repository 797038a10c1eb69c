export interface Spinner {
  /** Something arrived: clear the spinner's line. */
  bump(): void;
  stop(): void;
}

/** On a TTY, a quiet spinner on stderr while nothing arrives for a second; elsewhere nothing. */
export function startSpinner(stderr: NodeJS.WritableStream & { isTTY?: boolean }, now = Date.now): Spinner {
  if (stderr.isTTY !== true) return { bump() {}, stop() {} };
  const frames = ["|", "/", "-", "\\"];
  let frame = 0;
  let last = now();
  const timer = setInterval(() => {
    const quietMs = now() - last;
    if (quietMs < 1_000) return;
    stderr.write(`\r${frames[frame++ % frames.length]} waiting (${Math.round(quietMs / 1000)} s)`);
  }, 250);
  return {
    bump() {
      if (now() - last >= 1_000) stderr.write("\r\u001b[K");
      last = now();
    },
    stop() {
      clearInterval(timer);
      stderr.write("\r\u001b[K");
    },
  };
}
