import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";

/** The nice values a CLI may be given: only ever lower than the default (0), never higher. */
export const minCliNice = 0;
export const maxCliNice = 19;
export const CliNice = lazySchema(() => z.number().int().min(minCliNice).max(maxCliNice));

/**
 * The channel between a daemon and its CLI spawner: a small child process that starts the daemon's CLIs,
 * so neither the fork of the daemon's whole address space nor the wait for the CLI's exec happens on
 * the daemon's event loop. Node IPC (JSON lines on a private socketpair); a `stdio` reply carries the
 * pipe as its handle.
 */
export const CliSpawnRequest = lazySchema(() =>
  z.strictObject({
    type: z.literal("spawn"),
    id: z.number().int().positive(),
    command: z.string().min(1, "command must not be empty"),
    args: z.array(z.string()),
    cwd: z.string().min(1, "cwd must not be empty"),
    env: z.record(z.string(), z.string()),
    /** Given to the CLI and its scheduling group before anything of it is handed back. */
    nice: CliNice.optional(),
  }),
);
export type CliSpawnRequest = z.infer<typeof CliSpawnRequest>;

export const CliStdioStream = lazySchema(() => z.enum(["stdin", "stdout", "stderr"]));
export type CliStdioStream = z.infer<typeof CliStdioStream>;

export const CliSpawnReply = lazySchema(() =>
  z.discriminatedUnion("type", [
    /** One pipe of the CLI, as the message's handle; all three come before `spawned`. */
    z.strictObject({ type: z.literal("stdio"), id: z.number().int().positive(), stream: CliStdioStream }),
    /** Started; `startTime` is absent when the process was gone before it could be read. */
    z.strictObject({
      type: z.literal("spawned"),
      id: z.number().int().positive(),
      pid: z.number().int().positive(),
      startTime: z.string().optional(),
    }),
    /** Not started: the spawn's own error (a missing working directory, EACCES, …). */
    z.strictObject({ type: z.literal("failed"), id: z.number().int().positive(), message: z.string() }),
    z.strictObject({
      type: z.literal("exited"),
      id: z.number().int().positive(),
      code: z.number().int().nullable(),
      signal: z.string().nullable(),
    }),
  ]),
);
export type CliSpawnReply = z.infer<typeof CliSpawnReply>;
