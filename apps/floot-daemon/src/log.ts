export type LogLevel = "info" | "warn" | "error";

/** Structured log lines to stderr. Callers pass ids and codes, never a token, a secret or an env. */
export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, string | number | boolean | undefined>): void;
}

export function jsonLogger(stream: NodeJS.WritableStream = process.stderr, now = () => new Date()): Logger {
  return {
    log(level, message, fields = {}) {
      stream.write(`${JSON.stringify({ at: now().toISOString(), level, msg: message, ...fields })}\n`);
    },
  };
}

export const silentLogger: Logger = { log() {} };
