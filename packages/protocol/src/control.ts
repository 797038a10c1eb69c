import { z } from "zod";
import { AgentIdentity } from "./identity.js";
import { lazySchema } from "./lazy-schema.js";

/** A 32-byte CSPRNG token, hex encoded. */
export const ControlToken = lazySchema(() =>
  z.string().regex(/^[0-9a-f]{64}$/, "token must be 64 lowercase hex characters"),
);
export type ControlToken = z.infer<typeof ControlToken>;

const Pid = lazySchema(() => z.number().int().positive());
const Port = lazySchema(() => z.number().int().min(1).max(65535));

/** `<runDir>/<claudePid>.json`: how a hook finds the bridge of its Claude Code session. */
export const RunFile = lazySchema(() =>
  z.strictObject({
    port: Port,
    token: ControlToken,
    pid: Pid,
  }),
);
export type RunFile = z.infer<typeof RunFile>;

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
