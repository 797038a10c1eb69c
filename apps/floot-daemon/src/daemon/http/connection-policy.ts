import type { HttpConnectionLimits } from "@bridgeworks/control-channel";

/**
 * The API's listeners, the TCP port and `api.sock` each: a browser holds a few connections (its SSE
 * streams among them, never idle while open), the CLI one per command. A connection with no request in
 * progress is idle; a flood of those holds at most `maxIdleConnections` descriptors and never keeps a
 * client that sends its request at once from being served.
 */
export const defaultApiConnectionLimits: HttpConnectionLimits = {
  maxConnections: 1_024,
  maxIdleConnections: 128,
  idleTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
};

const knobs = {
  FLOOT_MAX_CONNECTIONS: "maxConnections",
  FLOOT_MAX_IDLE_CONNECTIONS: "maxIdleConnections",
  FLOOT_IDLE_TIMEOUT_MS: "idleTimeoutMs",
} as const satisfies Record<string, keyof HttpConnectionLimits>;

/** The defaults, each overridden by its variable when set; a value that is no positive integer is refused by name. */
export function apiConnectionLimitsFrom(
  env: Readonly<Record<string, string | undefined>>,
): HttpConnectionLimits {
  const limits = { ...defaultApiConnectionLimits };
  for (const [name, field] of Object.entries(knobs)) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    if (!/^[1-9][0-9]{0,8}$/.test(raw))
      throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
    limits[field] = Number(raw);
  }
  if (limits.maxIdleConnections >= limits.maxConnections) {
    throw new Error(
      `FLOOT_MAX_IDLE_CONNECTIONS (${limits.maxIdleConnections}) must be below FLOOT_MAX_CONNECTIONS (${limits.maxConnections})`,
    );
  }
  return limits;
}
