import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";

/** How much a process logs: `debug` < `info` < `warn` < `error`. */
export const LogLevel = lazySchema(() => z.enum(["debug", "info", "warn", "error"]));
export type LogLevel = z.infer<typeof LogLevel>;

/**
 * One line of every Bridgeworks process's structured log (JSON lines on stderr): when, how severe,
 * which component, what happened, then the caller's fields (ids and codes, never a token or a secret).
 */
export const LogRecord = lazySchema(() =>
  z.looseObject({
    time: z.iso.datetime({ offset: true }),
    level: LogLevel,
    component: z.string().min(1),
    message: z.string(),
  }),
);
export type LogRecord = z.infer<typeof LogRecord>;
