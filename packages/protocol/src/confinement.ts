import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";

// How a Floot session is confined (each turn's CLI runs its commands in the CLI's own OS sandbox), and
// who made a decision (a permission request's allow or deny, a secret's submission).

/** A host sandboxed commands may reach: `example.com`, `*.example.com`, `127.0.0.1:3000`. */
export const SandboxHost = lazySchema(() =>
  z
    .string()
    .max(253)
    .regex(
      /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d{1,5})?$/,
      "a host is a name or address, optionally with a leading '*.' and a ':port'",
    ),
);

/**
 * A session's sandbox. Absent or `enabled: true` (the default): every command of its turns runs in the
 * CLI's own sandbox (see the floot-daemon's docs/sandbox.md for what each backend does): the workspace and
 * `writablePaths` writable, the daemon's state and runtime dirs and other sessions' workspaces out of
 * reach, no network but `allowedHosts`. `enabled: false` runs unconfined, as the person chose.
 */
export const SessionSandbox = lazySchema(() =>
  z.strictObject({
    enabled: z.boolean(),
    allowedHosts: z.array(SandboxHost).max(100, "at most 100 hosts").optional(),
    writablePaths: z
      .array(z.string().startsWith("/", "a writable path must be absolute"))
      .max(100, "at most 100 writable paths")
      .optional(),
  }),
);
export type SessionSandbox = z.infer<typeof SessionSandbox>;

/** Whether a backend's sandbox can run on this machine, and what it takes. */
export const SandboxAvailability = lazySchema(() =>
  z.strictObject({
    available: z.boolean(),
    /** What confines the commands (e.g. `bubblewrap 0.8.0 and socat, user namespaces`). */
    mechanism: z.string(),
    /** Why it cannot run, and how to make it; absent when available. */
    problem: z.string().optional(),
  }),
);
export type SandboxAvailability = z.infer<typeof SandboxAvailability>;

/** The process behind a decision made over a local connection, from the kernel's socket tables. */
export const PeerProcess = lazySchema(() =>
  z.strictObject({
    pid: z.number().int().positive(),
    uid: z.number().int().nonnegative(),
    executable: z.string(),
  }),
);
export type PeerProcess = z.infer<typeof PeerProcess>;

/**
 * Who decided: a signed-in web UI page (`signIn`: a short public label of its sign-in, and its origin),
 * or a local process over the API socket (`socket`) or the TCP port with the API token (`api_token`),
 * with the peer process where the daemon could identify it (`peerUnknown` says why not).
 */
export const DecisionActor = lazySchema(() =>
  z.discriminatedUnion("via", [
    z.strictObject({
      via: z.literal("web"),
      signIn: z.string().max(64),
      origin: z.string().max(256),
    }),
    z.strictObject({
      via: z.enum(["socket", "api_token"]),
      peer: PeerProcess.optional(),
      peerUnknown: z.string().max(500).optional(),
    }),
  ]),
);
export type DecisionActor = z.infer<typeof DecisionActor>;

/** One line for a person: `web UI (sign-in 3f2a…, http://127.0.0.1:4711)`, `floot CLI pid 4242 (uid 1000, /usr/bin/node)`. */
export function describeActor(actor: DecisionActor): string {
  if (actor.via === "web") return `web UI (sign-in ${actor.signIn}, ${actor.origin})`;
  const how = actor.via === "socket" ? "API socket" : "API token";
  if (actor.peer === undefined) return `${how} (process unknown: ${actor.peerUnknown ?? "not identified"})`;
  return `${how}, pid ${actor.peer.pid} (uid ${actor.peer.uid}, ${actor.peer.executable})`;
}
