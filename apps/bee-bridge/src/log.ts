import { appendFileSync } from "node:fs";

export type LogLevel = "debug" | "info" | "warn" | "error";

const levelRank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface LoggerOptions {
  level: LogLevel;
  /** Where the JSON lines go; stderr in every real use, since stdout is the protocol. */
  write: (line: string) => void;
  now?: () => number;
  component: string;
}

/** Structured JSON lines. Callers pass fields explicitly; nothing here reads the environment or a token. */
export function createLogger({ level, write, now = Date.now, component }: LoggerOptions): Logger {
  const log = (at: LogLevel, message: string, fields: Record<string, unknown> = {}) => {
    if (levelRank[at] < levelRank[level]) return;
    write(
      `${JSON.stringify({ time: new Date(now()).toISOString(), level: at, component, message, ...fields })}\n`,
    );
  };
  return {
    debug: (message, fields) => log("debug", message, fields),
    info: (message, fields) => log("info", message, fields),
    warn: (message, fields) => log("warn", message, fields),
    error: (message, fields) => log("error", message, fields),
  };
}

export function parseLogLevel(value: string | undefined): LogLevel {
  if (value === undefined || value === "") return "info";
  if (value in levelRank) return value as LogLevel;
  throw new UsageError(
    "BEE_LOG_LEVEL",
    `must be one of debug, info, warn, error, got ${JSON.stringify(value)}`,
  );
}

/** Logs to stderr and, when `file` is given (`BEE_LOG_FILE`), also appends to it: Claude Code keeps MCP stderr out of sight. */
export function stderrLogger(level: LogLevel, component: string, file?: string): Logger {
  return createLogger({
    level,
    component,
    write: (line) => {
      process.stderr.write(line);
      if (file) appendFileSync(file, line, { mode: 0o600 });
    },
  });
}

/** A refusal of the user's input; `argument` names what was wrong. The CLI exits 2 on it. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(
    readonly argument: string,
    problem: string,
  ) {
    super(`${argument}: ${problem}`);
  }
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
