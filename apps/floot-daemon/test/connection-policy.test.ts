import { describe, expect, test } from "vitest";
import { apiConnectionLimitsFrom, defaultApiConnectionLimits } from "../src/daemon/http/connection-policy.js";

describe("the API listeners' connection limits from the environment", () => {
  test("the defaults, each overridden by its variable", () => {
    expect(apiConnectionLimitsFrom({})).toEqual(defaultApiConnectionLimits);
    expect(
      apiConnectionLimitsFrom({
        FLOOT_MAX_CONNECTIONS: "200",
        FLOOT_MAX_IDLE_CONNECTIONS: "50",
        FLOOT_IDLE_TIMEOUT_MS: "1500",
      }),
    ).toEqual({
      ...defaultApiConnectionLimits,
      maxConnections: 200,
      maxIdleConnections: 50,
      idleTimeoutMs: 1_500,
    });
  });

  test("a value that is no positive integer, or an idle cap not below the cap, is refused naming the variable", () => {
    expect(() => apiConnectionLimitsFrom({ FLOOT_IDLE_TIMEOUT_MS: "0" })).toThrow(
      'FLOOT_IDLE_TIMEOUT_MS must be a positive integer, got "0"',
    );
    expect(() => apiConnectionLimitsFrom({ FLOOT_MAX_CONNECTIONS: "1e3" })).toThrow(
      'FLOOT_MAX_CONNECTIONS must be a positive integer, got "1e3"',
    );
    expect(() => apiConnectionLimitsFrom({ FLOOT_MAX_CONNECTIONS: "100" })).toThrow(
      "FLOOT_MAX_IDLE_CONNECTIONS (128) must be below FLOOT_MAX_CONNECTIONS (100)",
    );
  });
});
