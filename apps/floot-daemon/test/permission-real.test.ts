import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { RecordedRequest, ScriptInput } from "@bridgeworks/model-double";
import type {
  DecidePermissionResponse,
  FlootOverview,
  FlootSession,
  PermissionRequest,
} from "@bridgeworks/protocol";
import { waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import { bundlePath, FlootWorld } from "./daemon-harness.js";

// Permission requests with the real claude 2.1.332 and the model double, decided through the `floot`
// CLI (the built bundle): Claude Code asks the daemon's permission prompt tool about every call outside
// the session's rules; the request is journaled and waits for the human.

let world: FlootWorld | undefined;
afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

const bodyText = (request: RecordedRequest) => JSON.stringify(request.body);

/** A session that allows nothing by itself: every Bash call is asked about. */
const askingSession = { allowedTools: [], permissionMode: "default" };

function bashCall(marker: string, id: string, command: string): ScriptInput["steps"][number] {
  return {
    match: { lastUserTextIncludes: marker },
    response: {
      events: [
        { type: "tool_use", id, nameFrom: { equals: "Bash" }, input: { command, description: "run" } },
      ],
    },
  };
}

async function floot(w: FlootWorld, ...argv: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [bundlePath, ...argv, "--state", w.stateDir, "--json"],
    { env: { ...process.env, HOME: w.env.home } },
  );
  return stdout;
}

async function pendingRequest(
  w: FlootWorld,
  toolCallKey: string,
  status = "pending",
): Promise<PermissionRequest> {
  let found: PermissionRequest | undefined;
  await waitUntil(
    async () => {
      const { requests } = JSON.parse(await floot(w, "approval", "list")) as {
        requests: PermissionRequest[];
      };
      found = requests.find((request) => request.toolCallKey === toolCallKey && request.status === status);
      return found !== undefined;
    },
    60_000,
    `a ${status} permission request for ${toolCallKey}\n${w.daemon?.process.stderr()}`,
  );
  return found!;
}

const lines = (path: string) => (existsSync(path) ? readFileSync(path, "utf8").trim().split("\n") : []);

describe("permission requests: claude", () => {
  test("allow once runs the call once; allow for the session lets the next matching call run unasked", async () => {
    world = await FlootWorld.create("claude", {
      steps: [
        bashCall("[first]", "toolu_first", "echo first >> ran.txt"),
        {
          match: { toolResultFor: "toolu_first" },
          response: { events: [{ type: "text", text: "FIRST DONE" }] },
        },
        bashCall("[second]", "toolu_second", "touch second.txt"),
        {
          match: { toolResultFor: "toolu_second" },
          response: { events: [{ type: "text", text: "SECOND DONE" }] },
        },
        bashCall("[third]", "toolu_third", "touch third.txt"),
        {
          match: { toolResultFor: "toolu_third" },
          response: { events: [{ type: "text", text: "THIRD DONE" }] },
        },
      ],
    });
    const w = world;
    await w.startDaemon();
    const session = await w.createSession(askingSession);
    const ran = join(session.workspace, "ran.txt");

    const first = await w.send(session.id, "[first] run it");
    const request = await pendingRequest(w, "toolu_first");
    expect(request).toMatchObject({
      turnId: first.id,
      toolName: "Bash",
      inputSummary: "echo first >> ran.txt",
      unmatchedRules: [],
      suggestedRule: "Bash(echo:*)",
    });
    // Nothing ran while the human has not decided.
    expect(existsSync(ran)).toBe(false);
    const allowed = JSON.parse(await floot(w, "approval", "allow", request.id)) as DecidePermissionResponse;
    expect(allowed).toMatchObject({ deliveredTo: "call", request: { status: "allowed" } });
    expect((await w.waitForEnd(first.id)).phase).toBe("completed");
    expect(lines(ran)).toEqual(["first"]);
    // Decided once, applied once.
    await expect(floot(w, "approval", "allow", request.id)).rejects.toThrow(/permission_request_closed/);

    // Allow for the session: the rule goes to later turns, which are not asked again. (Claude Code asks
    // about a redirection whatever the rule, so these calls only touch files.)
    const second = await w.send(session.id, "[second] run it");
    const secondRequest = await pendingRequest(w, "toolu_second");
    await floot(w, "approval", "allow", secondRequest.id, "--session");
    expect((await w.waitForEnd(second.id)).phase).toBe("completed");
    expect(secondRequest.suggestedRule).toBe("Bash(touch:*)");
    expect(JSON.parse(await floot(w, "approval", "rules", session.id))).toEqual({
      rules: ["Bash(touch:*)"],
      runAnyCode: [],
    });

    const third = await w.send(session.id, "[third] run it");
    expect((await w.waitForEnd(third.id)).phase).toBe("completed");
    expect(lines(ran)).toEqual(["first"]);
    expect(existsSync(join(session.workspace, "second.txt"))).toBe(true);
    expect(existsSync(join(session.workspace, "third.txt"))).toBe(true);
    const thirdAsked = (await w.events(third.id)).filter((e) => e.event.type === "permission.requested");
    expect(thirdAsked).toEqual([]);
  });

  test("deny tells the model, with the human's message", async () => {
    world = await FlootWorld.create("claude", {
      steps: [
        bashCall("[deny]", "toolu_deny", "echo nope >> denied.txt"),
        { match: { toolResultFor: "toolu_deny" }, response: { events: [{ type: "text", text: "OK" }] } },
      ],
    });
    const w = world;
    await w.startDaemon();
    const session = await w.createSession(askingSession);
    const turn = await w.send(session.id, "[deny] run it");
    const request = await pendingRequest(w, "toolu_deny");
    await floot(w, "approval", "deny", request.id, "--message", "not in this repo, use the sandbox");
    expect((await w.waitForEnd(turn.id)).phase).toBe("completed");
    const followUp = w.double.requests.find(
      (each) => each.index > 0 && bodyText(each).includes("toolu_deny") && bodyText(each).includes("sandbox"),
    );
    expect(followUp && bodyText(followUp)).toContain("not in this repo, use the sandbox");
    expect(existsSync(join(session.workspace, "denied.txt"))).toBe(false);
  });

  test("a pending request survives SIGKILL; its decision reaches the retry and the tool runs once", async () => {
    world = await FlootWorld.create("claude", {
      steps: [
        { ...bashCall("[durable]", "toolu_durable", "echo once >> once.txt"), repeat: true },
        {
          match: { toolResultFor: "toolu_durable" },
          repeat: true,
          response: { events: [{ type: "text", text: "DURABLE DONE" }] },
        },
      ],
    });
    const w = world;
    await w.startDaemon();
    const session = await w.createSession(askingSession);
    const turn = await w.send(session.id, "[durable] run it");
    const pending = await pendingRequest(w, "toolu_durable");
    // The keeper killed too: the turn's CLI goes with it (keeper-restart.test.ts: it is kept).
    await w.restartAfterKeeperKill();

    expect((await w.waitForEnd(turn.id)).phase).toBe("interrupted");
    const orphaned = await pendingRequest(w, "toolu_durable", "orphaned");
    expect(orphaned.id).toBe(pending.id);
    const decided = JSON.parse(await floot(w, "approval", "allow", pending.id)) as DecidePermissionResponse;
    expect(decided).toMatchObject({ deliveredTo: "retry", retryTurnId: expect.any(String) });
    const retry = await w.waitForEnd(decided.retryTurnId!);
    expect(retry.phase, JSON.stringify(retry.error)).toBe("completed");
    expect(lines(join(session.workspace, "once.txt"))).toEqual(["once"]);

    // The decision was applied once, to the retry's identical call, and nothing asked again.
    const retryEvents = (await w.events(retry.id)).map((e) => e.event);
    expect(retryEvents.filter((e) => e.type === "permission.requested")).toEqual([]);
    expect(retryEvents).toContainEqual({
      type: "permission.resolved",
      requestId: pending.id,
      status: "applied",
    });
    // The gate admitted the call in both turns; only the retry's was let through by the decision, and
    // only one line was written.
    const admitted = async (turnId: string) =>
      (await w.events(turnId)).filter((e) => e.event.type === "tool.admitted").length;
    expect(await admitted(turn.id)).toBe(1);
    expect(await admitted(retry.id)).toBe(1);
    expect(JSON.parse(await floot(w, "approval", "list"))).toEqual({ requests: [] });
  });

  test.each(["SIGTERM", "SIGKILL"] as const)(
    "a pending request across a %s restart, the CLI kept: decided once after it, the tool runs once, the turn completes",
    async (how) => {
      world = await FlootWorld.create("claude", {
        steps: [
          { ...bashCall("[kept]", "toolu_kept", "echo once >> kept.txt"), repeat: true },
          {
            match: { toolResultFor: "toolu_kept" },
            repeat: true,
            response: { events: [{ type: "text", text: "KEPT DONE" }] },
          },
        ],
      });
      const w = world;
      await w.startDaemon();
      const session = await w.createSession(askingSession);
      const turn = await w.send(session.id, "[kept] run it");
      const pending = await pendingRequest(w, "toolu_kept");
      if (how === "SIGTERM") await w.stopDaemon();
      else await w.killDaemon();
      await w.startDaemon();
      // Still pending, the same request: the CLI's permission prompt call was asked again by its id.
      const still = await pendingRequest(w, "toolu_kept");
      expect(still.id).toBe(pending.id);
      const decided = JSON.parse(await floot(w, "approval", "allow", pending.id)) as DecidePermissionResponse;
      expect(decided.deliveredTo).toBe("call");
      const done = await w.waitForEnd(turn.id, 90_000);
      expect(done.phase, JSON.stringify(done.error)).toBe("completed");
      expect(lines(join(session.workspace, "kept.txt"))).toEqual(["once"]);
      expect(await w.turns(session.id)).toHaveLength(1);
      expect(JSON.parse(await floot(w, "approval", "list"))).toEqual({ requests: [] });
    },
  );

  test("a request nobody decides within the session's --permission-timeout is denied; the model reads why", async () => {
    world = await FlootWorld.create("claude", {
      steps: [
        bashCall("[timeout]", "toolu_timeout", "touch late.txt"),
        {
          match: { toolResultFor: "toolu_timeout" },
          response: { events: [{ type: "text", text: "GAVE UP" }] },
        },
      ],
    });
    const w = world;
    await w.startDaemon();
    // Long enough to see the request pending on a loaded machine; the test waits it out.
    const created = await floot(
      w,
      ...["session", "create", "--backend", "claude", "--permission-mode", "default"],
      ...["--permission-timeout", "20s"],
    );
    const session = JSON.parse(created) as FlootSession;
    expect(session.permissionTimeoutMs).toBe(20_000);
    const turn = await w.send(session.id, "[timeout] run it");
    const request = await pendingRequest(w, "toolu_timeout");
    // While the call waits, the API says when it expires; the sessions list's overview has the request.
    const wait = Date.parse(request.expiresAt ?? "") - Date.parse(request.createdAt);
    expect(wait).toBeGreaterThanOrEqual(20_000);
    expect(wait).toBeLessThan(20_000 + 10_000);
    const overview = await w.client.request<FlootOverview>("GET", "/v1/overview");
    expect(overview.permissionRequests.map((each) => each.id)).toEqual([request.id]);

    expect((await w.waitForEnd(turn.id, 120_000)).phase).toBe("completed");
    const expired = await w.client.request<PermissionRequest>("GET", `/v1/permission-requests/${request.id}`);
    expect(expired).toMatchObject({ status: "expired" });
    expect(expired.expiresAt).toBeUndefined();
    const followUp = w.double.requests.find(
      (each) => bodyText(each).includes("toolu_timeout") && bodyText(each).includes("no decision within"),
    );
    expect(followUp && bodyText(followUp)).toContain(
      "floot: no decision within 20000 ms; the call was not run",
    );
    expect(existsSync(join(session.workspace, "late.txt"))).toBe(false);
    expect((await w.events(turn.id)).map((e) => e.event)).toContainEqual({
      type: "permission.resolved",
      requestId: request.id,
      status: "expired",
    });
  }, 180_000);
});
