import { describe, expect, test } from "vitest";
import {
  eventually,
  type RunningBridge,
  runBee,
  startAgentBridge,
  structured,
  textOf,
  useBridgeTestScope,
} from "./helpers.js";

// A bridge's identity holds a lease it renews; a claim lives exactly as long as the bridge does.

const scope = useBridgeTestScope();

const bridge = (agent: string) => startAgentBridge(scope, agent);

async function call(running: RunningBridge, name: string, args: Record<string, unknown> = {}) {
  return running.client.callTool({ name, arguments: args });
}

async function bee(...args: string[]) {
  return runBee(args, scope.sandbox.env);
}

async function setLeaseTtl(ms: number) {
  const set = await bee("board", "settings", "--lease-ttl", String(ms));
  expect([set.code, set.stdout], set.stderr).toEqual([0, `lease TTL ${ms} ms\n`]);
}

interface Claimed {
  outcome: string;
  record: { id: string; claimedBy: string; fence: number };
}

describe("leases", () => {
  test("a live bridge renews its lease: its claim outlives many TTLs, and the board knows its process", async () => {
    await setLeaseTtl(600);
    const alpha = await bridge("alpha");
    const id = (await bee("post", "--to", "alpha", "work")).stdout.trim();
    const claimed = structured<Claimed>(await call(alpha, "bee_claim", { actionId: id }));
    expect(claimed.record.fence).toBe(1);

    await new Promise((resolve) => setTimeout(resolve, 3000));
    const other = await bee("claim-next", "--as", "alpha");
    expect(other.code, other.stdout).toBe(3);
    const agents = JSON.parse((await bee("agents", "--json")).stdout) as Array<Record<string, unknown>>;
    expect(agents.find((agent) => agent.identity === claimed.record.claimedBy)).toMatchObject({
      status: "active",
      leaseExpiresAt: expect.any(String),
      process: { pid: alpha.process.pid, host: expect.any(String) },
    });
    expect(structured(await call(alpha, "bee_complete", { actionId: id, result: "kept" }))).toMatchObject({
      outcome: "completed",
    });
  });

  test("a SIGKILLed bridge's claim is claimable again once its lease lapses; bee wait says so truthfully", async () => {
    await setLeaseTtl(1000);
    const alpha = await bridge("alpha");
    const id = (await bee("post", "--to", "alpha", "work")).stdout.trim();
    const claimed = structured<Claimed>(await call(alpha, "bee_claim", { actionId: id }));
    process.kill(alpha.process.pid, "SIGKILL");
    await alpha.process.exited;

    // The wait sweeps the lapsed lease itself: the action reads open, never as held by the dead bridge.
    const waited = await bee("wait", id, "--until", "completed", "--timeout", "4");
    expect([waited.code, waited.stdout]).toEqual([3, `not yet completed: ${id} is open, nobody holds it\n`]);
    const agents = JSON.parse((await bee("agents", "--json")).stdout) as Array<Record<string, unknown>>;
    expect(agents.find((agent) => agent.identity === claimed.record.claimedBy)).toMatchObject({
      status: "expired",
    });
    const reclaimed = JSON.parse((await bee("claim", id, "--as", "alpha", "--json")).stdout) as Claimed;
    expect(reclaimed).toMatchObject({ outcome: "claimed", record: { fence: 2 } });
  });

  test("a bridge stopped past its lease gets a new identity; its old claim's complete is refused stale_fence", async () => {
    await setLeaseTtl(1000);
    const alpha = await bridge("alpha");
    const before = structured<{ identity: string }>(await call(alpha, "bee_whoami")).identity;
    const id = (await bee("post", "--to", "alpha", "work")).stdout.trim();
    structured(await call(alpha, "bee_claim", { actionId: id }));

    process.kill(alpha.process.pid, "SIGSTOP");
    try {
      await new Promise((resolve) => setTimeout(resolve, 2500));
      // Meanwhile another of alpha's sessions takes the released action.
      const taken = JSON.parse((await bee("claim", id, "--as", "alpha", "--json")).stdout) as Claimed;
      expect(taken).toMatchObject({ outcome: "claimed", record: { fence: 2 } });
    } finally {
      process.kill(alpha.process.pid, "SIGCONT");
    }

    const after = await eventually(async () => {
      const { identity } = structured<{ identity: string }>(await call(alpha, "bee_whoami"));
      return identity !== before ? identity : undefined;
    }, 20_000);
    expect(after).toMatch(/^agent:alpha#[0-9a-f]{8}$/);
    const late = await call(alpha, "bee_complete", { actionId: id, result: "late" });
    expect(late.isError).toBe(true);
    expect(textOf(late)).toMatch(/^stale_fence: /);
    expect(JSON.parse((await bee("list", "--json")).stdout).records[0]).toMatchObject({
      state: "claimed",
      fence: 2,
    });
  });
});
