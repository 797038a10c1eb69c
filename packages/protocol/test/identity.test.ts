import { describe, expect, test } from "vitest";
import { AgentIdentity, AgentName, mintAgentIdentity, parseAgentIdentity } from "../src/index.js";
import { firstMessage } from "./issues.js";

const fixedBytes = (bytes: number[]) => (size: number) => Uint8Array.from(bytes.slice(0, size));

describe("agent identity", () => {
  test("mints agent:<name>#<8 hex> from the injected randomness", () => {
    expect(mintAgentIdentity("reviewer", fixedBytes([0xde, 0xad, 0xbe, 0xef]))).toBe(
      "agent:reviewer#deadbeef",
    );
  });

  test("parses into name and nonce", () => {
    expect(parseAgentIdentity("agent:my-app.v2#0a1b2c3d")).toEqual({ name: "my-app.v2", nonce: "0a1b2c3d" });
  });

  test.each([
    "agent:reviewer#DEADBEEF",
    "agent:reviewer#deadbee",
    "agent:#deadbeef",
    "reviewer#deadbeef",
    "agent:two words#deadbeef",
    "agent:reviewer#deadbeef0",
  ])("refuses %j", (value) => {
    expect(AgentIdentity.safeParse(value).success).toBe(false);
    expect(firstMessage(AgentIdentity, value)).toContain("agent identity");
  });

  test("refuses a name the identity format cannot carry, naming the agent name", () => {
    expect(() => mintAgentIdentity("has space", fixedBytes([1, 2, 3, 4]))).toThrow(/agent name/);
    expect(firstMessage(AgentName, "")).toContain("agent name");
  });
});
