import { describe, expect, test } from "vitest";
import {
  bundlePath,
  eventually,
  type RunningBridge,
  runBee,
  startAgentBridge,
  textOf,
  useBridgeTestScope,
} from "./helpers.js";

// Permission requests through the board: the PermissionRequest hook (fed the JSON Claude Code 2.1.332
// sends) and the decisions of people (bee approve / bee deny) and of agents the policy names (bee_decide).

const scope = useBridgeTestScope();

const permissionRequest = JSON.stringify({
  session_id: "s-1",
  transcript_path: "/tmp/t.jsonl",
  cwd: "/tmp/worker",
  permission_mode: "default",
  effort: { level: "medium" },
  hook_event_name: "PermissionRequest",
  tool_name: "Bash",
  tool_input: { command: "rm -rf build", description: "remove build" },
  permission_suggestions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }],
});

async function bee(...args: string[]) {
  return runBee(args, scope.sandbox.env);
}

/** The hook as Claude Code runs it, as the agent `worker`. */
function startHook(...args: string[]) {
  const hook = scope.tracker.spawn(process.execPath, [bundlePath, "hook", "permission-request", ...args], {
    env: { ...scope.sandbox.env, BEE_AGENT: "worker" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  hook.child.stdin?.end(permissionRequest);
  return hook;
}

interface Listed {
  records: Array<{ id: string; kind: string; state: string; from: string; to: string; body: string }>;
}

async function approvalId(): Promise<string> {
  return eventually(async () => {
    const out = (await bee("list", "--json")).stdout;
    // A list that printed nothing (CI saw one, at full load) is asked again, not parsed.
    if (out.trim() === "") return undefined;
    const listed = JSON.parse(out) as Listed;
    return listed.records.find((record) => record.kind === "approval" && record.state === "open")?.id;
  }, 20_000);
}

const bridge = (agent: string) => startAgentBridge(scope, agent);

const allow = { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } } };

describe("bee hook permission-request", () => {
  test("asks the board, and allows once the person it names approves; later decisions answer already_decided", async () => {
    const hook = startHook("--to", "human:iain", "--timeout", "60");
    const id = await approvalId();
    const listed = JSON.parse((await bee("list", "--json")).stdout) as Listed;
    expect(listed.records.find((record) => record.id === id)).toMatchObject({
      to: "human:iain",
      from: expect.stringMatching(/^agent:worker#[0-9a-f]{8}$/),
      body: expect.stringMatching(/^Bash\(rm -rf build\)\n\{"tool_name":"Bash"/),
    });

    const stranger = await bee("approve", id, "--by", "human:ana");
    expect([stranger.code, stranger.stderr]).toEqual([
      1,
      `bee: human:ana may not decide approval ${id}: its deciders are human:iain\n`,
    ]);
    const approved = await bee("approve", id, "--by", "human:iain", "--reason", "generated");
    expect([approved.code, approved.stdout]).toEqual([0, `allowed ${id} as human:iain\n`]);
    expect(await hook.exited).toMatchObject({ code: 0 });
    expect(JSON.parse(hook.stdout())).toEqual(allow);
    expect(hook.stderr()).toContain(`bee approve ${id}`);

    for (const again of [
      ["approve", id, "--by", "human:iain"],
      ["deny", id, "--by", "human:iain"],
    ]) {
      const late = await bee(...again);
      expect(late.code).toBe(1);
      expect(late.stdout).toMatch(new RegExp(`^already_decided: ${id} was allowed by human:iain at `));
    }
    // The asking identity lived only while the hook waited.
    const agents = JSON.parse((await bee("agents", "--json")).stdout) as Array<{
      name: string;
      status: string;
    }>;
    expect(agents.filter((agent) => agent.name === "worker").map((agent) => agent.status)).toEqual([
      "departed",
    ]);
  });

  test("a denial reaches the model as the message; no decision within the bound denies and withdraws it", async () => {
    const denied = startHook("--to", "human:iain", "--timeout", "60");
    const first = await approvalId();
    expect((await bee("deny", first, "--by", "human:iain", "--reason", "not on main")).code).toBe(0);
    expect(await denied.exited).toMatchObject({ code: 0 });
    expect(JSON.parse(denied.stdout()).hookSpecificOutput.decision).toEqual({
      behavior: "deny",
      message: `denied on the bee board by human:iain: not on main (approval ${first}); not run`,
    });

    const unanswered = startHook("--to", "human:iain", "--timeout", "2");
    expect(await unanswered.exited).toMatchObject({ code: 0 });
    const message = JSON.parse(unanswered.stdout()).hookSpecificOutput.decision.message as string;
    expect(message).toMatch(
      /^no decision on the bee board within 2 s \(approval act_[0-9a-f]{16}, asked of human:iain\); not run/,
    );
    const withdrawn = (JSON.parse((await bee("list", "--json")).stdout) as Listed).records.at(-1);
    expect(withdrawn).toMatchObject({ kind: "approval", state: "cancelled" });
    expect((await bee("approve", withdrawn!.id, "--by", "human:iain")).stderr).toContain("withdrawn");
  });

  test("a lead agent the policy names decides through bee_decide; an unlisted agent is refused", async () => {
    const lead = await bridge("lead");
    const stranger = await bridge("stranger");
    const hook = startHook("--to", "lead", "--timeout", "60");
    // The lead is woken by the request addressed to it.
    const page = (await lead.client.callTool({ name: "bee_wait_action", arguments: { timeoutSeconds: 30 } }))
      .structuredContent as Listed;
    const request = page.records.find((record) => record.kind === "approval");
    expect(request).toMatchObject({ to: "lead", state: "open" });

    const refused = await stranger.client.callTool({
      name: "bee_decide",
      arguments: { actionId: request!.id, decision: "allow" },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe(
      `not_permitted: ${await whoami(stranger)} may not decide approval ${request!.id}: its deciders are lead, human`,
    );
    const decided = await lead.client.callTool({
      name: "bee_decide",
      arguments: { actionId: request!.id, decision: "allow", reason: "fine" },
    });
    expect(decided.structuredContent).toMatchObject({
      outcome: "decided",
      record: { decidedBy: await whoami(lead) },
    });
    expect(await hook.exited).toMatchObject({ code: 0 });
    expect(JSON.parse(hook.stdout())).toEqual(allow);
  });

  test("input it cannot read asks nobody: exit 1, so Claude Code asks as it would without bee", async () => {
    const hook = scope.tracker.spawn(
      process.execPath,
      [bundlePath, "hook", "permission-request", "--to", "human:iain"],
      {
        env: scope.sandbox.env,
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    hook.child.stdin?.end('{"hook_event_name":"PermissionRequest"}');
    expect(await hook.exited).toMatchObject({ code: 1 });
    expect(hook.stdout()).toBe("");
    expect(hook.stderr()).toMatch(/^bee hook permission-request: stdin: session_id: /);
    expect((await bee("list")).stdout).toMatch(/^no actions on the board\n/);
    const usage = await bee("hook", "permission-request", "--to", "*");
    expect([usage.code, usage.stderr]).toEqual([
      2,
      "bee hook permission-request: --to: ask one person (human:NAME) or one lead agent, not * (see 'bee hook permission-request --help')\n",
    ]);
  });
});

async function whoami(running: RunningBridge): Promise<string> {
  return (
    (await running.client.callTool({ name: "bee_whoami", arguments: {} })).structuredContent as {
      identity: string;
    }
  ).identity;
}
