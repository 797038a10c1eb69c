import { z } from "zod";
import { CliNice } from "./cli-spawner.js";
import { lazySchema } from "./lazy-schema.js";

// The CLI keeper's channel: one small process per daemon state dir that spawns the daemon's CLIs, owns
// their pipes and keeps what they wrote, so a daemon restart interrupts no turn. A daemon (this one or
// the next) talks to it over a unix socket in the daemon's private runtime dir: JSON lines, each way.
// Both ends prove they hold the state dir's keeper key (HMAC-SHA256 over the other's nonce) before
// anything else is said; the socket's 0600 mode in a 0700 dir keeps other users out first.

/** Bumped when a message changes meaning: a daemon meeting a keeper of another version leaves it alone. */
export const keeperProtocolVersion = 1;

const Nonce = lazySchema(() => z.string().regex(/^[A-Za-z0-9_-]{43}$/, "a nonce is 32 bytes, base64url"));
const Proof = lazySchema(() =>
  z.string().regex(/^[A-Za-z0-9_-]{43}$/, "a proof is an HMAC-SHA256, base64url"),
);
/** The daemon's name for a kept CLI (its turn id). */
const KeptId = lazySchema(() => z.string().min(1).max(128));
/** A byte offset in a kept CLI's stdout: where a line starts. */
const Offset = lazySchema(() => z.number().int().nonnegative());

/** What a daemon asks the keeper to start: the CLI, and what to write to its stdin (then closed). */
export const KeptCliSpec = lazySchema(() =>
  z.strictObject({
    command: z.string().min(1),
    args: z.array(z.string()),
    cwd: z.string().min(1),
    env: z.record(z.string(), z.string()),
    nice: CliNice.optional(),
    stdin: z.string(),
  }),
);
export type KeptCliSpec = z.infer<typeof KeptCliSpec>;

/** A kept CLI as the keeper knows it. */
export const KeptCli = lazySchema(() =>
  z.strictObject({
    id: KeptId,
    pid: z.number().int().positive(),
    startTime: z.string(),
    /** Where its stdout ends so far (the next line starts here). */
    end: Offset,
    /** Set once it exited. */
    exit: z.strictObject({ code: z.number().int().nullable(), signal: z.string().nullable() }).optional(),
  }),
);
export type KeptCli = z.infer<typeof KeptCli>;

export const KeeperRequest = lazySchema(() =>
  z.discriminatedUnion("type", [
    /** First, from the daemon: its nonce, for the keeper to prove itself. */
    z.strictObject({ type: z.literal("hello"), version: z.number().int(), nonce: Nonce }),
    /** Second, from the daemon: its proof over the keeper's nonce. */
    z.strictObject({ type: z.literal("prove"), proof: Proof }),
    z.strictObject({ type: z.literal("spawn"), id: KeptId, spec: KeptCliSpec }),
    /** Stream the CLI's lines from `from` (a line's start), then as they come, then its exit. */
    z.strictObject({ type: z.literal("attach"), id: KeptId, from: Offset }),
    /** The daemon journaled everything before `offset`: the keeper may forget it. */
    z.strictObject({ type: z.literal("ack"), id: KeptId, offset: Offset }),
    /** TERM the CLI's process group, KILL it after `graceMs`. */
    z.strictObject({ type: z.literal("stop"), id: KeptId, graceMs: z.number().int().nonnegative() }),
    /** Its end is journaled: forget it (and its spool). */
    z.strictObject({ type: z.literal("release"), id: KeptId }),
    z.strictObject({ type: z.literal("list") }),
    /** End every kept CLI and exit (a stop that ends the turns too). */
    z.strictObject({ type: z.literal("shutdown"), graceMs: z.number().int().nonnegative() }),
  ]),
);
export type KeeperRequest = z.infer<typeof KeeperRequest>;

export const KeeperReply = lazySchema(() =>
  z.discriminatedUnion("type", [
    z.strictObject({
      type: z.literal("hello"),
      version: z.number().int(),
      pid: z.number().int().positive(),
      startTime: z.string(),
      /** HMAC over the daemon's nonce. */
      proof: Proof,
      /** For the daemon to prove itself over. */
      nonce: Nonce,
    }),
    z.strictObject({ type: z.literal("ready") }),
    z.strictObject({
      type: z.literal("spawned"),
      id: KeptId,
      pid: z.number().int().positive(),
      startTime: z.string(),
    }),
    z.strictObject({ type: z.literal("failed"), id: KeptId, message: z.string() }),
    /** One stdout line (without its newline), starting at `offset`; the next one starts at `next`. */
    z.strictObject({ type: z.literal("line"), id: KeptId, offset: Offset, next: Offset, text: z.string() }),
    /** A stdout line over the keeper's bound: the CLI was stopped. */
    z.strictObject({ type: z.literal("overflow"), id: KeptId, offset: Offset, limit: z.number().int() }),
    /** The CLI exited and every line before `end` was sent; `stderrTail`: its last words. */
    z.strictObject({
      type: z.literal("exited"),
      id: KeptId,
      end: Offset,
      code: z.number().int().nullable(),
      signal: z.string().nullable(),
      stderrTail: z.string(),
    }),
    z.strictObject({ type: z.literal("list"), clis: z.array(KeptCli) }),
    /** A request the keeper refused (unknown id, a spool that no longer reaches `from`, …). */
    z.strictObject({ type: z.literal("error"), id: KeptId.optional(), message: z.string() }),
  ]),
);
export type KeeperReply = z.infer<typeof KeeperReply>;

/** What the keeper is started with: one JSON line on its stdin (never argv, never its environment). */
export const KeeperSettings = lazySchema(() =>
  z.strictObject({
    socketPath: z.string().startsWith("/"),
    /** The state dir's keeper key, base64url. */
    key: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
    spoolDir: z.string().startsWith("/"),
    idleExitMs: z.number().int().positive().optional(),
  }),
);
export type KeeperSettings = z.infer<typeof KeeperSettings>;
