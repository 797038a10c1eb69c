import { appendFileSync } from "node:fs";
import type { LogLevel, LogRecord } from "@bridgeworks/protocol";

/** A log line's own fields: ids, codes, counts. Never a token, a secret or an environment. */
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export interface LoggerOptions {
  /** Which process or part of it speaks: `bee-bridge`, `floot-daemon`. */
  component: string;
  /** Lines below this level are dropped; default `info`. */
  level?: LogLevel;
  /** Where each line goes (it ends with `\n`); stderr in every real use. */
  write: (line: string) => void;
  now?: () => number;
}

const levelRank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** JSON lines with one field schema (`LogRecord`): `time`, `level`, `component`, `message`, then the fields. */
export function createLogger({ component, level = "info", write, now = Date.now }: LoggerOptions): Logger {
  const log = (at: LogLevel, message: string, fields: LogFields = {}) => {
    if (levelRank[at] < levelRank[level]) return;
    const record: LogRecord = { time: new Date(now()).toISOString(), level: at, component, message };
    // The caller's fields follow; they never replace the four that every line has.
    for (const [key, value] of Object.entries(fields)) if (!(key in record)) record[key] = value;
    write(`${JSON.stringify(record)}\n`);
  };
  return {
    debug: (message, fields) => log("debug", message, fields),
    info: (message, fields) => log("info", message, fields),
    warn: (message, fields) => log("warn", message, fields),
    error: (message, fields) => log("error", message, fields),
  };
}

/**
 * Writes to `stream` (stderr: stdout may be a protocol) and, when `file` is given, appends to it too
 * (0600), for hosts that hide a child's stderr.
 */
export function streamSink(stream: NodeJS.WritableStream, file?: string): (line: string) => void {
  return (line) => {
    stream.write(line);
    if (file) appendFileSync(file, line, { mode: 0o600 });
  };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
