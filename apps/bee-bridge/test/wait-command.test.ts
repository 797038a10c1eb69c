import { openBoard } from "@bridgeworks/board";
import { describe, expect, test } from "vitest";
import { bundlePath, runBee, startAgentBridge, structured, textOf, useBridgeTestScope } from "./helpers.js";

// Delivery you can wait on: bee post prints the id, bee wait (and bee_wait_for) block until the board
// says claimed or completed, and say the state truthfully.

const scope = useBridgeTestScope();

async function bee(...args: string[]) {
  return runBee(args, scope.sandbox.env);
}

/** `bee wait` as a process of its own, to be killed or awaited. */
function startWait(...args: string[]) {
  return scope.tracker.spawn(process.execPath, [bundlePath, "wait", ...args], {
    env: scope.sandbox.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

const bridge = (agent: string) => startAgentBridge(scope, agent);

describe("bee post and bee wait", () => {
  test("post prints the id alone; wait says not yet (exit 3), then claimed, then done (exit 0)", async () => {
    const posted = await bee("post", "--to", "alpha", "review PR 12");
    expect(posted.code, posted.stderr).toBe(0);
    const id = posted.stdout.trim();
    expect(posted.stdout).toMatch(/^act_[0-9a-f]{16}\n$/);
    expect(posted.stderr).toBe(`posted ${id} to alpha; bee wait ${id} waits for it\n`);

    const early = await bee("wait", id, "--until", "claimed", "--timeout", "1");
    expect([early.code, early.stdout]).toEqual([3, `not yet claimed: ${id} is open, nobody holds it\n`]);

    const claimedWait = startWait(id, "--until", "claimed");
    const doneWait = startWait(id, "--until", "completed", "--json");
    // Both are waiting on the board before anything happens to the action.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const claim = await bee("claim", id, "--as", "alpha");
    expect(claim.code, claim.stderr).toBe(0);
    expect(await claimedWait.exited).toMatchObject({ code: 0 });
    expect(claimedWait.stdout()).toMatch(
      new RegExp(`^${id} is claimed by agent:alpha#[0-9a-f]{8}, fence 1\\n$`),
    );

    expect((await bee("complete", id, "--as", "alpha", "--result", "LGTM")).code).toBe(0);
    expect(await doneWait.exited).toMatchObject({ code: 0 });
    expect(JSON.parse(doneWait.stdout())).toMatchObject({
      reached: true,
      timedOut: false,
      record: { id, state: "done", result: "LGTM" },
    });
  });

  test("a cancel ends the wait with exit 1 and says who cancelled; an unknown id is a failure", async () => {
    const id = (await bee("post", "--to", "*", "maybe")).stdout.trim();
    const waiting = startWait(id);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // The CLI has no cancel; a person's tool would call the board's.
    const board = await openBoard(scope.sandbox.board);
    await board.cancel("human:iain", id as never, "obsolete");
    await board.close();
    expect(await waiting.exited).toMatchObject({ code: 1 });
    expect(waiting.stdout()).toBe(`${id} is cancelled by human:iain: obsolete\n`);
    const unknown = await bee("wait", "act_0000000000000000", "--timeout", "1");
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      "bee: no action act_0000000000000000 on this board\n",
    ]);
  });

  test("survives a crash of either side: a killed wait run again, a killed claimer's action open again", async () => {
    const set = await bee("board", "settings", "--lease-ttl", "1000");
    expect(set.code).toBe(0);
    const id = (await bee("post", "--to", "alpha", "work")).stdout.trim();
    const first = startWait(id, "--until", "completed");
    await new Promise((resolve) => setTimeout(resolve, 1000));
    process.kill(first.pid, "SIGKILL");
    await first.exited;

    // The claimer is a bridge that dies holding the action.
    const alpha = await bridge("alpha");
    structured(await alpha.client.callTool({ name: "bee_claim", arguments: { actionId: id } }));
    const second = startWait(id, "--until", "completed");
    process.kill(alpha.process.pid, "SIGKILL");
    await alpha.process.exited;
    const truth = await bee("wait", id, "--until", "completed", "--timeout", "4");
    expect([truth.code, truth.stdout]).toEqual([3, `not yet completed: ${id} is open, nobody holds it\n`]);

    // Someone else finishes it; the wait that was running all along sees it done.
    const rescuer = await bridge("alpha");
    structured(await rescuer.client.callTool({ name: "bee_claim", arguments: { actionId: id } }));
    structured(
      await rescuer.client.callTool({ name: "bee_complete", arguments: { actionId: id, result: "ok" } }),
    );
    expect(await second.exited).toMatchObject({ code: 0 });
    expect(second.stdout()).toMatch(new RegExp(`^${id} is done by agent:alpha#[0-9a-f]{8}: ok\\n$`));
  });
});

describe("bee_wait_for", () => {
  test("an agent that posted waits until another claims and completes it; a short wait says not yet", async () => {
    const poster = await bridge("poster");
    const worker = await bridge("worker");
    const posted = structured<{ id: string }>(
      await poster.client.callTool({ name: "bee_post", arguments: { to: "worker", body: "build it" } }),
    );
    const notYet = structured<{ reached: boolean; record: { state: string } }>(
      await poster.client.callTool({
        name: "bee_wait_for",
        arguments: { actionId: posted.id, until: "claimed", timeoutSeconds: 1 },
      }),
    );
    expect(notYet).toMatchObject({ reached: false, record: { state: "open" } });

    const waiting = poster.client.callTool({
      name: "bee_wait_for",
      arguments: { actionId: posted.id, timeoutSeconds: 30 },
    });
    structured(await worker.client.callTool({ name: "bee_claim", arguments: { actionId: posted.id } }));
    structured(
      await worker.client.callTool({
        name: "bee_complete",
        arguments: { actionId: posted.id, result: "built" },
      }),
    );
    expect(structured(await waiting)).toMatchObject({
      reached: true,
      record: { state: "done", result: "built" },
    });

    const bad = await poster.client.callTool({
      name: "bee_wait_for",
      arguments: { actionId: posted.id, until: "gone" },
    });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^until: /);
  });
});
