import { z } from "zod";
import { AgentIdentity } from "./identity.js";
import { lazySchema } from "./lazy-schema.js";

/** A 32-byte CSPRNG token, hex encoded. */
export const ControlToken = lazySchema(() =>
  z.string().regex(/^[0-9a-f]{64}$/, "token must be 64 lowercase hex characters"),
);
export type ControlToken = z.infer<typeof ControlToken>;

/** A fresh 32-byte CSPRNG nonce of the retire challenge, hex encoded. */
export const ControlNonce = lazySchema(() =>
  z.string().regex(/^[0-9a-f]{64}$/, "nonce must be 64 lowercase hex characters"),
);
export type ControlNonce = z.infer<typeof ControlNonce>;

const Pid = lazySchema(() => z.number().int().positive());
const Port = lazySchema(() => z.number().int().min(1).max(65535));

/**
 * When a process started, as the system tells it: clock ticks since boot from `/proc/<pid>/stat` on
 * Linux, `ps -o lstart=` elsewhere. Only ever compared for equality with a fresh reading.
 */
export const ProcessStartTime = lazySchema(() =>
  z.string().min(1, "startTime must not be empty").max(64, "startTime must be at most 64 characters"),
);

/**
 * The process serving a control endpoint, named by pid and start time: a pid alone may belong to
 * another process by now.
 */
export const ControlProcess = lazySchema(() => z.strictObject({ pid: Pid, startTime: ProcessStartTime }));
export type ControlProcess = z.infer<typeof ControlProcess>;

/**
 * `<runDir>/<claudePid>.json`: how a hook finds the bridge of its Claude Code session. `pid` and
 * `startTime` name the bridge process, so a hook can tell a live bridge from a reused pid.
 */
export const RunFile = lazySchema(() =>
  z.strictObject({
    port: Port,
    token: ControlToken,
    pid: Pid,
    startTime: ProcessStartTime,
  }),
);
export type RunFile = z.infer<typeof RunFile>;

/**
 * The run file bee wrote before it recorded the bridge's start time. Recognized only to say so: a
 * hook treats it as stale, since nothing in it tells the bridge from another process of the same pid.
 */
export const LegacyRunFile = lazySchema(() =>
  z.strictObject({
    port: Port,
    token: ControlToken,
    pid: Pid,
  }),
);

/** The answer of `POST /retire`: 200 done, 202 still running, 500 failed. */
export const RetireOutcome = lazySchema(() =>
  z.discriminatedUnion("status", [
    z.strictObject({ status: z.literal("done"), retired: AgentIdentity, current: AgentIdentity }),
    z.strictObject({ status: z.literal("running") }),
    z.strictObject({ status: z.literal("failed"), error: z.string() }),
  ]),
);
export type RetireOutcome = z.infer<typeof RetireOutcome>;

export const retireOutcomeHttpStatus = { done: 200, running: 202, failed: 500 } as const satisfies Record<
  RetireOutcome["status"],
  number
>;
